package offline

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of an offline observation: it is injected into prompts, so it stays compact.
const (
	maxTitle     = 80
	maxSubtitle  = 120
	maxFact      = 200
	maxFacts     = 8
	maxNarrative = 400
	maxConcepts  = 5
	maxFiles     = 20
	maxPath      = 200
	// conceptScan bounds how much of one text is tokenized for concepts.
	conceptScan = 2048
)

// clip returns s on one line (control characters and runs of white space become one space,
// invalid UTF-8 is dropped) and at most n runes long, ending in "…" when it was cut.
func clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	// Only the head can survive; bound the work for huge inputs.
	if lim := n*8 + 64; len(s) > lim {
		s = s[:lim]
	}
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean && !strings.Contains(s, "  ") {
		s = strings.TrimSpace(s)
		if len(s) <= n {
			return s
		}
		return strings.TrimRight(s[:n-1], " ") + "…"
	}
	var b strings.Builder
	b.Grow(min(len(s), n*3))
	runes := 0
	pendingSpace := false
	cut := false
	for _, r := range s {
		if r == utf8.RuneError { // invalid bytes and U+FFFD alike: noise in a memory
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.IsSpace(r) ||
			(r >= 0x200b && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || r == 0xfeff {
			pendingSpace = b.Len() > 0
			continue
		}
		if pendingSpace {
			if runes >= n-1 {
				cut = true
				break
			}
			b.WriteByte(' ')
			runes++
			pendingSpace = false
		}
		if runes >= n {
			cut = true
			break
		}
		b.WriteRune(r)
		runes++
	}
	out := b.String()
	if !cut {
		return out
	}
	rs := []rune(out)
	if len(rs) > n-1 {
		rs = rs[:n-1]
	}
	return strings.TrimRight(string(rs), " ") + "…"
}

// firstLine returns the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		var line string
		if i < 0 {
			line, s = s, ""
		} else {
			line, s = s[:i], s[i+1:]
		}
		if t := strings.TrimSpace(line); t != "" {
			return t
		}
	}
	return ""
}

// relPath makes p relative to cwd when it lies inside it.
func relPath(cwd, p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	cwd = strings.TrimRight(cwd, "/\\")
	if cwd != "" && strings.HasPrefix(p, cwd) {
		rest := p[len(cwd):]
		switch {
		case rest == "":
			return "."
		case rest[0] == '/' || rest[0] == '\\':
			p = rest[1:]
			if p == "" {
				return "."
			}
		}
	}
	p = strings.TrimPrefix(p, "./")
	return clip(p, maxPath)
}

// baseName is the last element of a slash- or backslash-separated path.
func baseName(p string) string {
	p = strings.TrimRight(p, "/\\")
	if i := strings.LastIndexAny(p, "/\\"); i >= 0 {
		return p[i+1:]
	}
	return p
}

// words calls fn for each lower-cased alphanumeric word of s, and for the parts of
// camelCase words ("ErrTokenExpired" yields "errtokenexpired", "err", "token", "expired").
// It stops early when fn returns false. w is only valid during the call (no allocation).
func words(s string, fn func(w []byte) bool) {
	var buf [48]byte
	i := 0
	for i < len(s) {
		for i < len(s) && !isWordByte(s[i]) {
			i++
		}
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		if j == i {
			break
		}
		w := s[i:j]
		i = j
		if len(w) > len(buf) {
			continue
		}
		lw := lowerInto(buf[:0], w)
		if !fn(lw) {
			return
		}
		// camelCase parts, when the word has inner upper case letters.
		start := 0
		parts := 0
		for k := 1; k <= len(w); k++ {
			boundary := k == len(w)
			if !boundary {
				prev, cur := w[k-1], w[k]
				next := byte(0)
				if k+1 < len(w) {
					next = w[k+1]
				}
				boundary = (isLower(prev) || isDigit(prev)) && isUpper(cur) ||
					isUpper(prev) && isUpper(cur) && isLower(next) ||
					cur == '_'
			}
			if boundary {
				if start == 0 && k == len(w) {
					break // no inner boundary: the whole word was already reported
				}
				part := strings.Trim(w[start:k], "_")
				if part != "" {
					parts++
					if !fn(lowerInto(buf[:0], part)) {
						return
					}
				}
				start = k
			}
		}
	}
}

func isWordByte(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) || c == '_' }
func isLower(c byte) bool    { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool    { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }

func lowerInto(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// conceptWords maps a word to the concept it signals. Read-only.
var conceptWords = map[string]string{
	"auth": "auth", "authn": "auth", "authz": "auth", "authentication": "auth",
	"authorization": "auth", "login": "auth", "logout": "auth", "oauth": "auth",
	"password": "auth", "credential": "auth", "credentials": "auth", "bearer": "auth",
	"signin": "auth", "signup": "auth", "permission": "auth", "permissions": "auth",
	"token": "auth", "tokens": "auth",
	"jwt":  "jwt",
	"test": "testing", "tests": "testing", "testing": "testing", "spec": "testing",
	"pytest": "testing", "jest": "testing", "vitest": "testing", "mock": "testing",
	"assert": "testing", "fixture": "testing", "fixtures": "testing", "rspec": "testing",
	"sql": "database", "sqlite": "database", "postgres": "database", "postgresql": "database",
	"mysql": "database", "db": "database", "database": "database", "migration": "database",
	"migrations": "database", "schema": "database", "orm": "database", "mongo": "database",
	"mongodb": "database", "prisma": "database", "fts5": "database",
	"api": "api", "endpoint": "api", "endpoints": "api", "handler": "api", "handlers": "api",
	"route": "api", "routes": "api", "router": "api", "http": "api", "rest": "api",
	"graphql": "api", "grpc": "api", "middleware": "api", "request": "api", "response": "api",
	"err": "error-handling", "error": "error-handling", "errors": "error-handling",
	"panic": "error-handling", "exception": "error-handling", "recover": "error-handling",
	"config": "config", "configuration": "config", "settings": "config", "env": "config",
	"yaml": "config", "toml": "config", "dotenv": "config",
	"makefile": "build", "build": "build", "compile": "build", "webpack": "build",
	"vite": "build", "tsconfig": "build", "bazel": "build", "esbuild": "build",
	"dependency": "dependencies", "dependencies": "dependencies", "deps": "dependencies",
	"requirements": "dependencies", "vendor": "dependencies",
	"ci": "ci", "workflow": "ci", "workflows": "ci", "pipeline": "ci",
	"docker": "deployment", "dockerfile": "deployment", "kubernetes": "deployment",
	"k8s": "deployment", "helm": "deployment", "deploy": "deployment", "terraform": "deployment",
	"git": "git", "commit": "git", "rebase": "git", "branch": "git",
	"component": "ui", "components": "ui", "css": "ui", "html": "ui", "jsx": "ui",
	"tsx": "ui", "react": "ui", "vue": "ui", "svelte": "ui", "frontend": "ui",
	"readme": "docs", "docs": "docs", "documentation": "docs", "changelog": "docs",
	"performance": "performance", "perf": "performance", "cache": "performance",
	"benchmark": "performance", "latency": "performance", "optimize": "performance",
	"goroutine": "concurrency", "mutex": "concurrency", "concurrency": "concurrency",
	"race": "concurrency", "thread": "concurrency", "threads": "concurrency",
	"deadlock": "concurrency", "semaphore": "concurrency",
	"security": "security", "csrf": "security", "xss": "security", "cors": "security",
	"encrypt": "security", "crypto": "security", "tls": "security", "secret": "security",
	"secrets": "security", "sanitize": "security",
	"log": "logging", "logger": "logging", "logging": "logging", "slog": "logging",
	"cli": "cli", "flags": "cli", "cobra": "cli",
	"search": "search", "embedding": "search", "embeddings": "search",
	"websocket": "networking", "tcp": "networking", "dns": "networking", "grpcurl": "networking",
}

// concepts collects up to maxConcepts distinct concepts, in order of discovery.
type concepts struct{ list []string }

func (c *concepts) add(concept string) {
	if concept == "" || len(c.list) >= maxConcepts {
		return
	}
	for _, have := range c.list {
		if have == concept {
			return
		}
	}
	c.list = append(c.list, concept)
}

func (c *concepts) scan(s string) {
	if len(c.list) >= maxConcepts {
		return
	}
	if len(s) > conceptScan {
		s = s[:conceptScan]
	}
	words(s, func(w []byte) bool {
		if concept, ok := conceptWords[string(w)]; ok {
			c.add(concept)
		}
		return len(c.list) < maxConcepts
	})
}

// fileConcepts adds what a path says about its subject: test files and directory names.
func (c *concepts) path(p string) {
	b := strings.ToLower(baseName(p))
	if strings.Contains(b, "_test.") || strings.Contains(b, ".test.") ||
		strings.Contains(b, ".spec.") || strings.HasPrefix(b, "test_") {
		c.add("testing")
	}
	c.scan(p)
}

// Intent is what a user prompt asks for.
type intent int

const (
	intentNone intent = iota
	intentFeature
	intentRefactor
	intentBug
)

var bugWords = map[string]bool{
	"fix": true, "fixes": true, "fixing": true, "bug": true, "bugs": true, "buggy": true,
	"broken": true, "error": true, "errors": true, "panic": true, "panics": true,
	"crash": true, "crashes": true, "crashing": true, "fail": true, "fails": true,
	"failing": true, "failure": true, "500": true, "exception": true, "regression": true,
	"wrong": true, "incorrect": true, "leak": true, "hang": true, "hangs": true,
	"deadlock": true, "flaky": true, "traceback": true, "segfault": true, "nil": true,
	"undefined": true, "debug": true, "issue": true,
}

var refactorWords = map[string]bool{
	"refactor": true, "refactoring": true, "rename": true, "cleanup": true, "clean": true,
	"extract": true, "simplify": true, "restructure": true, "reorganize": true,
	"reorganise": true, "dedupe": true, "deduplicate": true, "tidy": true,
}

var featureWords = map[string]bool{
	"add": true, "implement": true, "create": true, "support": true, "introduce": true,
	"build": true, "new": true, "feature": true, "allow": true, "enable": true,
}

// promptIntent classifies a user prompt; a bug report wins over a refactor over a feature.
func promptIntent(p string) intent {
	if len(p) > 4096 {
		p = p[:4096]
	}
	it := intentNone
	words(p, func(w []byte) bool {
		switch {
		case bugWords[string(w)]:
			it = intentBug
			return false
		case refactorWords[string(w)]:
			if it < intentRefactor {
				it = intentRefactor
			}
		case featureWords[string(w)]:
			if it < intentFeature {
				it = intentFeature
			}
		}
		return true
	})
	if it != intentBug {
		lp := strings.ToLower(p)
		if hasAny(lp, "doesn't work", "not working", "does not work", "修复", "修正", "错误", "报错", "崩溃", "失败", "异常", "缺陷") {
			it = intentBug
		} else if it < intentRefactor && hasAny(p, "重构", "重命名", "清理") {
			it = intentRefactor
		} else if it < intentFeature && hasAny(p, "添加", "新增", "实现", "支持") {
			it = intentFeature
		}
	}
	return it
}

// promptGist is the first sentence of a prompt, short enough for a narrative.
func promptGist(p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if len(p) > 1024 {
		p = p[:1024]
	}
	ss := splitSentences(clip(p, 400), nil)
	if len(ss) == 0 {
		return ""
	}
	return clip(ss[0], 140)
}

// splitSentences appends the sentences of one paragraph of plain text to dst. A sentence
// ends at . ! or ? followed by white space and an upper-case letter, digit, quote or
// bracket (or the end), unless the word before is a common abbreviation.
func splitSentences(s string, dst []string) []string {
	s = strings.TrimSpace(s)
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == '.' || s[j] == '!' || s[j] == '?' || s[j] == ')' || s[j] == '"' || s[j] == '\'') {
			j++
		}
		if j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\n' {
			continue
		}
		k := j
		for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n') {
			k++
		}
		if k < len(s) {
			n := s[k]
			if !(isUpper(n) || isDigit(n) || n == '"' || n == '\'' || n == '(' || n == '[' || n == '`' || n == '*' || n >= 0x80) {
				continue
			}
		}
		if c == '.' && isAbbrev(s[start:i]) {
			continue
		}
		if sent := strings.TrimSpace(s[start:j]); sent != "" {
			dst = append(dst, sent)
		}
		start = k
		i = k - 1
	}
	if sent := strings.TrimSpace(s[start:]); sent != "" {
		dst = append(dst, sent)
	}
	return dst
}

var abbreviations = map[string]bool{
	"e.g": true, "i.e": true, "etc": true, "vs": true, "cf": true, "mr": true, "mrs": true,
	"dr": true, "approx": true, "fig": true, "no": true, "eg": true, "ie": true, "st": true,
}

// isAbbrev reports whether the text before a period ends in an abbreviation.
func isAbbrev(before string) bool {
	i := strings.LastIndexAny(before, " \t\n(")
	w := strings.ToLower(before[i+1:])
	return abbreviations[w] || (len(w) == 1 && w[0] >= 'a' && w[0] <= 'z')
}

// joinClip joins items with sep and stops before the result would exceed n runes.
func joinClip(items []string, sep string, n int) string {
	var b strings.Builder
	shown := 0
	for _, it := range items {
		if it == "" {
			continue
		}
		extra := len(it)
		if shown > 0 {
			extra += len(sep)
		}
		if b.Len()+extra > n {
			if shown == 0 {
				return clip(it, n)
			}
			rest := len(items) - shown
			more := " (+" + itoa(rest) + " more)"
			if b.Len()+len(more) <= n+16 {
				b.WriteString(more)
			}
			break
		}
		if shown > 0 {
			b.WriteString(sep)
		}
		b.WriteString(it)
		shown++
	}
	return b.String()
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var buf [20]byte
	i := len(buf)
	for n > 0 {
		i--
		buf[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		buf[i] = '-'
	}
	return string(buf[i:])
}

// plural renders "1 file" / "2 files".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return itoa(n) + " " + many
}

// capitalize upper-cases the first letter of s when its first word is a plain
// lower-case word (not a file name, path or identifier like "jwt/v5" or "refresh.go").
func capitalize(s string) string {
	if s == "" || !isLower(s[0]) {
		return s
	}
	for i := 1; i < len(s) && s[i] != ' '; i++ {
		if !isLower(s[i]) && s[i] != ',' && s[i] != ':' && s[i] != '\'' {
			return s
		}
	}
	return string(s[0]-'a'+'A') + s[1:]
}

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

// concepts collects up to maxConcepts distinct concepts, in order of discovery.
type concepts struct {
	v    *vocab
	list []string
}

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
		if concept, ok := c.v.concept[string(w)]; ok {
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

// promptIntent classifies a user prompt; a bug report wins over a refactor over a feature.
func promptIntent(v *vocab, p string) intent {
	if len(p) > 4096 {
		p = p[:4096]
	}
	it := intentNone
	words(p, func(w []byte) bool {
		switch {
		case v.bug[string(w)]:
			it = intentBug
			return false
		case v.refactor[string(w)]:
			if it < intentRefactor {
				it = intentRefactor
			}
		case v.feature[string(w)]:
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

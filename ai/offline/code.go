package offline

import (
	"sort"
	"strings"
)

// Cheap source scanning: no parser, one pass over lines, bounded.
const (
	maxScanBytes = 256 << 10 // content scanned for declarations
	maxDiffLines = 400       // lines per side considered by analyzeEdit
	maxLineBytes = 400       // bytes per line considered by analyzeEdit
)

// lang is the kind of text a file holds, from its name.
type lang int

const (
	langNone lang = iota
	langGo
	langJS // JavaScript and TypeScript
	langPython
	langRust
	langRuby
	langJVM // Java, Kotlin, Scala, C#, Swift, PHP, Dart
	langC
	langShell
	langMarkdown
	langYAML
	langTOML
	langJSON
	langText
)

var langNames = [...]string{
	langNone: "", langGo: "Go", langJS: "JavaScript/TypeScript", langPython: "Python",
	langRust: "Rust", langRuby: "Ruby", langJVM: "", langC: "C/C++", langShell: "shell",
	langMarkdown: "Markdown", langYAML: "YAML", langTOML: "TOML", langJSON: "JSON",
	langText: "text",
}

var extLangs = map[string]lang{
	"go": langGo, "ts": langJS, "tsx": langJS, "js": langJS, "jsx": langJS, "mjs": langJS,
	"cjs": langJS, "mts": langJS, "cts": langJS, "vue": langJS, "svelte": langJS,
	"py": langPython, "pyi": langPython, "rs": langRust, "rb": langRuby, "rake": langRuby,
	"java": langJVM, "kt": langJVM, "kts": langJVM, "scala": langJVM, "cs": langJVM,
	"swift": langJVM, "php": langJVM, "dart": langJVM, "groovy": langJVM,
	"c": langC, "h": langC, "cc": langC, "cpp": langC, "cxx": langC, "hpp": langC, "hh": langC,
	"m": langC, "mm": langC, "zig": langC,
	"sh": langShell, "bash": langShell, "zsh": langShell, "fish": langShell,
	"md": langMarkdown, "mdx": langMarkdown, "markdown": langMarkdown, "rst": langText,
	"txt": langText, "adoc": langText,
	"yaml": langYAML, "yml": langYAML, "toml": langTOML, "json": langJSON, "jsonc": langJSON,
	"ipynb": langPython,
}

func langOf(p string) lang {
	b := baseName(p)
	i := strings.LastIndexByte(b, '.')
	if i < 0 {
		switch strings.ToLower(b) {
		case "makefile", "dockerfile", "justfile":
			return langShell
		}
		return langNone
	}
	var buf [12]byte
	ext := b[i+1:]
	if len(ext) > len(buf) {
		return langNone
	}
	return extLangs[string(lowerInto(buf[:0], ext))]
}

// isCode reports whether a file holds program text (a change to it can fix a bug), as
// opposed to prose.
func isCode(l lang) bool { return l != langMarkdown && l != langText }

// declModifiers are words that may precede a declaration keyword.
var declModifiers = map[string]bool{
	"export": true, "default": true, "pub": true, "pub(crate)": true, "pub(super)": true,
	"public": true, "private": true, "protected": true, "static": true, "async": true,
	"abstract": true, "final": true, "sealed": true, "open": true, "internal": true,
	"override": true, "unsafe": true, "extern": true, "inline": true, "declare": true,
	"readonly": true, "virtual": true, "partial": true, "data": true, "suspend": true,
}

// declKinds maps a declaration keyword to how it is shown.
var declKinds = map[string]string{
	"func": "func", "function": "func", "function*": "func", "def": "func", "fn": "func",
	"fun": "func", "class": "type", "interface": "type", "struct": "type", "enum": "type",
	"trait": "type", "type": "type", "module": "type", "protocol": "type", "object": "type",
	"record": "type", "union": "type",
}

// declName reports the name declared by one (already left-trimmed) line, e.g.
// "func (s *Server) Start(ctx" → "Server.Start". Exported JS constants count too.
func declName(t string) (string, bool) {
	if t == "" || !isIdentStart(t[0]) {
		return "", false
	}
	exported := false
	for range 4 {
		w, rest := cutWord(t)
		if !declModifiers[w] {
			break
		}
		if w == "export" || w == "pub" || w == "public" {
			exported = true
		}
		t = rest
	}
	kw, rest := cutWord(t)
	if kw == "" {
		return "", false
	}
	switch kw {
	case "const", "let", "var":
		if !exported {
			return "", false
		}
		name := identPrefix(rest)
		if name == "" || !strings.Contains(rest, "=") {
			return "", false
		}
		return name, true
	case "func":
		if strings.HasPrefix(rest, "(") { // Go method: func (r *Recv) Name(
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				return "", false
			}
			recv := strings.Fields(rest[1:end])
			name := identPrefix(strings.TrimLeft(rest[end+1:], " "))
			if name == "" {
				return "", false
			}
			if len(recv) > 0 {
				r := strings.TrimLeft(recv[len(recv)-1], "*")
				if k := strings.IndexByte(r, '['); k >= 0 {
					r = r[:k]
				}
				if r != "" {
					return r + "." + name, true
				}
			}
			return name, true
		}
	case "def":
		rest = strings.TrimPrefix(rest, "self.")
	}
	if _, ok := declKinds[kw]; !ok {
		return "", false
	}
	name := identPrefix(rest)
	if name == "" || (kw == "type" && rest != "" && rest[0] == '(') {
		return "", false
	}
	return name, true
}

// cutWord splits off the first space-separated word.
func cutWord(s string) (string, string) {
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeft(s[i:], " \t")
}

func isIdentStart(c byte) bool { return isLower(c) || isUpper(c) || c == '_' || c == '$' }

func identPrefix(s string) string {
	if s == "" || !isIdentStart(s[0]) {
		return ""
	}
	i := 1
	for i < len(s) && (isWordByte(s[i]) || s[i] == '$') {
		i++
	}
	if i > 64 {
		return ""
	}
	return s[:i]
}

// outline is what a scan of a whole file finds worth remembering.
type outline struct {
	label string   // "defines", "sections", "keys"
	names []string // declared names, headings or top-level keys
	todos []string // TODO / FIXME lines
	lines int
}

// scanOutline lists the top-level declarations (code), headings (Markdown) or top-level
// keys (YAML, TOML) of content, plus TODO/FIXME remarks.
func scanOutline(content string, l lang) outline {
	o := outline{label: "defines"}
	switch l {
	case langMarkdown:
		o.label = "sections"
	case langYAML, langTOML:
		o.label = "keys"
	}
	if len(content) > maxScanBytes {
		content = content[:maxScanBytes]
	}
	seen := map[string]bool{}
	// Content shown with line numbers ("    12\tcode", "    12→code") is scanned without them.
	first, _, _ := strings.Cut(content, "\n")
	numbered := first != "" && stripLineNo(first) != first
	for len(content) > 0 {
		var line string
		if i := strings.IndexByte(content, '\n'); i >= 0 {
			line, content = content[:i], content[i+1:]
		} else {
			line, content = content, ""
		}
		o.lines++
		if numbered {
			line = stripLineNo(line)
		}
		if len(o.todos) < 2 && (strings.Contains(line, "TODO") || strings.Contains(line, "FIXME") || strings.Contains(line, "XXX:")) {
			o.todos = append(o.todos, clip(strings.TrimLeft(strings.TrimSpace(line), "/#*-;! "), 160))
		}
		if line == "" || len(o.names) >= 24 {
			continue
		}
		var name string
		switch l {
		case langMarkdown:
			if line[0] == '#' {
				name = clip(strings.TrimLeft(line, "# "), 60)
			}
		case langYAML:
			if isIdentStart(line[0]) {
				if i := strings.IndexByte(line, ':'); i > 0 && i < 64 {
					name = line[:i]
				}
			}
		case langTOML:
			if line[0] == '[' {
				name = strings.Trim(strings.TrimSpace(line), "[]")
			}
		case langNone, langText, langJSON, langShell:
		default:
			// Top-level declarations only (no indentation), plus class members one level in
			// for languages whose files are one class.
			if line[0] == ' ' || line[0] == '\t' {
				if l != langJVM {
					continue
				}
				t := strings.TrimLeft(line, " \t")
				if len(line)-len(t) > 4 {
					continue
				}
				line = t
			}
			name, _ = declName(strings.TrimRight(line, "\r"))
		}
		if name != "" && !seen[name] {
			seen[name] = true
			o.names = append(o.names, name)
		}
	}
	if strings.HasSuffix(content, "\n") {
		o.lines--
	}
	return o
}

// stripLineNo removes a "cat -n" style line number prefix.
func stripLineNo(line string) string {
	i := 0
	for i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && isDigit(line[j]) {
		j++
	}
	if j == i || j-i > 7 {
		return line
	}
	if rest, ok := strings.CutPrefix(line[j:], "\t"); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(line[j:], "→"); ok {
		return rest
	}
	return line
}

// enclosingDecl finds the declaration that contains byte offset at in content, looking
// backwards for the nearest line that declares something.
func enclosingDecl(content string, at int) string {
	if at <= 0 || at > len(content) {
		return ""
	}
	lo := max(0, at-maxScanBytes)
	for end := at; end > lo; {
		start := strings.LastIndexByte(content[lo:end], '\n')
		line := content[lo+start+1 : end]
		if start < 0 {
			line = content[lo:end]
		}
		if name, ok := declName(strings.TrimLeft(line, " \t")); ok {
			return name
		}
		if start < 0 {
			break
		}
		end = lo + start
	}
	return ""
}

// lexed is what lexLine finds in one line of code.
type lexed struct {
	idents  []string // qualified identifiers (a.b.C), outside strings and comments
	strs    []string // string literal contents
	comment string   // trailing comment text
}

// lexLine splits a line into identifiers, string literals and a trailing comment.
func lexLine(s string, hashComments bool, dst *lexed) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '`' || (c == '\'' && !(i > 0 && isWordByte(s[i-1]))):
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j > len(s) {
				j = len(s)
			}
			lit := s[i+1 : j]
			if len(lit) >= 2 && c != '\'' || len(lit) >= 4 {
				dst.strs = append(dst.strs, lit)
			}
			i = j + 1
		case c == '/' && i+1 < len(s) && (s[i+1] == '/' || s[i+1] == '*'),
			hashComments && c == '#':
			dst.comment = strings.TrimSpace(strings.TrimLeft(s[i:], "/#*- "))
			return
		case isIdentStart(c):
			j := i + 1
			for j < len(s) {
				if isWordByte(s[j]) || s[j] == '$' {
					j++
					continue
				}
				if s[j] == '.' && j+1 < len(s) && isIdentStart(s[j+1]) {
					j += 2
					continue
				}
				break
			}
			dst.idents = append(dst.idents, s[i:j])
			i = j
		case isDigit(c):
			j := i + 1
			for j < len(s) && (isWordByte(s[j]) || s[j] == '.') {
				j++
			}
			i = j
		default:
			i++
		}
	}
}

// keywords are identifiers that say nothing about a change.
var keywords = map[string]bool{
	"if": true, "else": true, "for": true, "while": true, "return": true, "func": true,
	"function": true, "def": true, "class": true, "var": true, "let": true, "const": true,
	"nil": true, "null": true, "None": true, "true": true, "false": true, "True": true,
	"False": true, "undefined": true, "new": true, "this": true, "self": true, "in": true,
	"of": true, "and": true, "or": true, "not": true, "is": true, "switch": true,
	"case": true, "break": true, "continue": true, "try": true, "catch": true,
	"except": true, "finally": true, "throw": true, "raise": true, "import": true,
	"from": true, "package": true, "go": true, "defer": true, "async": true, "await": true,
	"fn": true, "pub": true, "mut": true, "impl": true, "struct": true, "type": true,
	"interface": true, "string": true, "int": true, "bool": true, "err": true, "ctx": true,
	"ok": true, "do": true, "end": true, "then": true, "elif": true, "with": true, "as": true,
	"static": true, "public": true, "private": true, "void": true, "range": true, "map": true,
	"make": true, "len": true, "println": true, "print": true, "fmt.Println": true,
	"console.log": true, "export": true, "default": true, "typeof": true, "instanceof": true,
	"yield": true, "lambda": true, "pass": true, "match": true, "where": true, "use": true,
	"select": true, "chan": true, "byte": true, "error": true, "any": true, "int64": true,
	"float64": true, "uint": true, "char": true, "long": true, "double": true,
}

// commonQualifiers are packages and receivers whose members are rarely the point.
var commonQualifiers = map[string]bool{
	"errors": true, "fmt": true, "strings": true, "console": true, "Math": true,
	"this": true, "self": true, "os": true, "log": true, "t": true, "b": true,
	"strconv": true, "bytes": true, "json": true, "JSON": true, "Object": true,
	"Array": true, "assert": true, "require": true, "sort": true, "slices": true,
}

// salience ranks an identifier introduced by an edit: error names and qualified
// exported names say most about what the change handles.
func salience(id string) int {
	if len(id) < 3 {
		return -5
	}
	score := 0
	last := id
	qual := ""
	if i := strings.LastIndexByte(id, '.'); i >= 0 {
		qual, last = id[:i], id[i+1:]
		if j := strings.LastIndexByte(qual, '.'); j >= 0 {
			qual = qual[j+1:]
		}
	}
	if strings.HasPrefix(last, "Err") && len(last) > 3 && isUpper(last[3]) ||
		strings.HasSuffix(last, "Error") || strings.HasSuffix(last, "Exception") {
		score += 4
	}
	if qual != "" && !commonQualifiers[qual] {
		score += 2
	}
	if last != "" && isUpper(last[0]) {
		score++
	}
	if len(last) >= 4 {
		score++
	}
	return score
}

// editDiff is what an edit changed, line by line, in words a person would use.
type editDiff struct {
	added, removed int
	addedLines     []string
	removedLines   []string
	addedDecls     []string
	removedDecls   []string
	conditions     []string // new checks, e.g. "if errors.Is(err, jwt.ErrTokenExpired)"
	condIdents     []string // salient identifiers used in new checks
	outcomes       []string // "returns 401 \"token expired\""
	newIdents      []string // salient identifiers new in the edit, best first
	pairs          [][2]string
	comment        string // the first new comment-only line, without its markers
	fixComment     bool   // a new comment says fix/bug/workaround
	errNowChecked  bool   // an ignored error (_) is now bound and used
}

// splitCodeLines returns the trimmed, non-trivial lines of s (at most maxDiffLines).
func splitCodeLines(s string) []string {
	var out []string
	for len(s) > 0 && len(out) < maxDiffLines {
		var line string
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			line, s = s, ""
		}
		line = strings.TrimSpace(line)
		if len(line) > maxLineBytes {
			line = line[:maxLineBytes]
		}
		trivial := true
		for i := 0; i < len(line); i++ {
			if isWordByte(line[i]) {
				trivial = false
				break
			}
		}
		if !trivial {
			out = append(out, line)
		}
	}
	return out
}

// analyzeEdit compares the old and new text of an edit.
func analyzeEdit(oldS, newS string, l lang) editDiff {
	var d editDiff
	oldLines, newLines := splitCodeLines(oldS), splitCodeLines(newS)
	counts := make(map[string]int, len(oldLines))
	for _, ln := range oldLines {
		counts[ln]++
	}
	newCounts := make(map[string]int, len(newLines))
	for _, ln := range newLines {
		newCounts[ln]++
	}
	hash := l == langPython || l == langRuby || l == langShell || l == langYAML || l == langTOML
	commentLines := 0
	for _, ln := range newLines {
		if counts[ln] > 0 {
			counts[ln]--
			continue
		}
		if c, ok := commentLine(ln, hash); ok {
			commentLines++
			if d.comment == "" {
				d.comment = clip(c, 180)
			}
			d.fixComment = d.fixComment || saysFix(c)
			continue
		}
		d.addedLines = append(d.addedLines, ln)
	}
	for _, ln := range oldLines {
		if newCounts[ln] > 0 {
			newCounts[ln]--
			continue
		}
		d.removedLines = append(d.removedLines, ln)
	}
	d.added, d.removed = len(d.addedLines)+commentLines, len(d.removedLines)

	oldIdents := map[string]bool{}
	var lx lexed
	for _, ln := range oldLines {
		lx = lexed{idents: lx.idents[:0]}
		lexLine(ln, hash, &lx)
		for _, id := range lx.idents {
			oldIdents[id] = true
		}
	}
	for _, ln := range d.removedLines {
		if name, ok := declName(ln); ok {
			d.removedDecls = appendUnique(d.removedDecls, name)
		}
	}

	type cand struct {
		id    string
		score int
		pos   int
	}
	var cands []cand
	seen := map[string]bool{}
	for _, ln := range d.addedLines {
		lx = lexed{idents: lx.idents[:0]}
		lexLine(ln, hash, &lx)
		if lx.comment != "" && saysFix(lx.comment) {
			d.fixComment = true
		}
		if name, ok := declName(ln); ok {
			d.addedDecls = appendUnique(d.addedDecls, name)
		}
		for _, id := range lx.idents {
			if oldIdents[id] || seen[id] || keywords[id] {
				continue
			}
			seen[id] = true
			cands = append(cands, cand{id, salience(id), len(cands)})
		}
		code := ln
		if lx.comment != "" {
			if i := strings.Index(code, lx.comment); i > 0 {
				code = strings.TrimRight(strings.TrimRight(code[:i], "/#*- "), " ")
			}
		}
		if cond, ok := condition(code); ok {
			d.conditions = append(d.conditions, cond)
			best, bestScore := "", 0
			for _, id := range lx.idents {
				if s := salience(id); !keywords[id] && s > bestScore && !oldIdents[id] {
					best, bestScore = id, s
				}
			}
			if best != "" {
				d.condIdents = appendUnique(d.condIdents, best)
			}
		}
		if out := outcome(code, lx); out != "" && len(d.outcomes) < 2 {
			d.outcomes = appendUnique(d.outcomes, out)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	for _, c := range cands {
		if c.score <= 0 || len(d.newIdents) >= 4 {
			break
		}
		d.newIdents = append(d.newIdents, c.id)
	}

	// Pair each removed line with the added line that resembles it most.
	used := make([]bool, len(d.addedLines))
	for ri, r := range d.removedLines {
		if len(d.pairs) >= 3 || ri == 24 {
			break
		}
		best, bestSim := -1, 0.3
		for i, a := range d.addedLines {
			if i == 64 {
				break
			}
			if used[i] {
				continue
			}
			if s := similarity(r, a); s >= bestSim {
				best, bestSim = i, s
			}
		}
		if best >= 0 {
			used[best] = true
			d.pairs = append(d.pairs, [2]string{r, d.addedLines[best]})
			if (strings.Contains(r, "_ :=") || strings.Contains(r, "_ =") || strings.Contains(r, ", _")) &&
				strings.Contains(d.addedLines[best], "err") {
				d.errNowChecked = true
			}
		}
	}
	return d
}

func appendUnique(list []string, s string) []string {
	for _, have := range list {
		if have == s {
			return list
		}
	}
	return append(list, s)
}

// commentLine reports whether a trimmed line is only a comment, and its text.
func commentLine(ln string, hash bool) (string, bool) {
	for _, p := range [...]string{"//", "/*", "* ", "*/", "<!--", "-- "} {
		if strings.HasPrefix(ln, p) {
			return strings.TrimSpace(strings.Trim(ln, "/*<!-> ")), true
		}
	}
	if hash && strings.HasPrefix(ln, "#") && !strings.HasPrefix(ln, "#!") {
		return strings.TrimSpace(strings.TrimLeft(ln, "# ")), true
	}
	return "", false
}

// saysFix reports whether a comment speaks of a fix.
func saysFix(comment string) bool {
	lc := strings.ToLower(comment)
	return strings.Contains(lc, "fix") || strings.Contains(lc, "bug") ||
		strings.Contains(lc, "workaround") || strings.Contains(lc, "regression")
}

// condition reports a line that adds a check, without its keyword punctuation.
func condition(ln string) (string, bool) {
	for _, kw := range [...]string{"if ", "if(", "} else if ", "else if ", "elif ", "case ", "guard ", "unless ", "when ", "catch ", "} catch ", "except ", "switch ", "match "} {
		if strings.HasPrefix(ln, kw) {
			c := strings.TrimSpace(strings.TrimPrefix(ln, "} "))
			c = strings.TrimRight(c, "{: ")
			return clip(c, 120), true
		}
	}
	return "", false
}

// statusWords maps names used for HTTP error responses to their codes.
var statusWords = []struct {
	word string
	code string
}{
	{"unauthorized", "401"}, {"unauthorised", "401"}, {"forbidden", "403"},
	{"notfound", "404"}, {"not_found", "404"}, {"badrequest", "400"}, {"bad_request", "400"},
	{"conflict", "409"}, {"toomanyrequests", "429"}, {"too_many_requests", "429"},
	{"unprocessable", "422"}, {"internalservererror", "500"}, {"internal_server_error", "500"},
	{"serviceunavailable", "503"}, {"service_unavailable", "503"}, {"gone", "410"},
}

// outcome describes what a new line makes the code return, raise or respond, e.g.
// `return unauthorized(w, "token expired")` → `returns 401 "token expired"`.
func outcome(ln string, lx lexed) string {
	verb := ""
	rest := ln
	switch {
	case strings.HasPrefix(ln, "return ") || strings.HasPrefix(ln, "return("):
		verb, rest = "returns", ln[len("return"):]
	case strings.HasPrefix(ln, "raise ") || strings.HasPrefix(ln, "throw "):
		verb, rest = "raises", ln[len("raise"):]
	case strings.HasPrefix(ln, "panic("):
		verb = "panics"
	case strings.Contains(ln, "WriteHeader(") || strings.Contains(ln, "http.Error(") ||
		strings.Contains(ln, ".status(") || strings.Contains(ln, ".JSON(") ||
		strings.Contains(ln, "abort(") || strings.Contains(ln, "Abort"):
		verb = "responds"
	default:
		return ""
	}
	code := statusCode(rest)
	msg := ""
	for _, s := range lx.strs {
		if strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			msg = `"` + clip(s, 60) + `"`
			break
		}
	}
	if verb == "raises" {
		rest = strings.TrimSpace(rest)
		rest = strings.TrimPrefix(rest, "new ")
		if exc := identPrefix(rest); exc != "" {
			code = exc
		}
	}
	switch {
	case code != "" && msg != "":
		return verb + " " + code + " " + msg
	case code != "":
		return verb + " " + code
	case msg != "":
		return verb + " " + msg
	case verb == "returns":
		r := strings.TrimSpace(rest)
		if r == "" || r == "nil" || r == "None" || r == "null" || r == ";" {
			return ""
		}
		return "returns " + clip(r, 80)
	}
	return ""
}

// statusCode finds an HTTP status in a line: a 4xx/5xx literal or a well-known name.
func statusCode(s string) string {
	for i := 0; i+3 <= len(s); i++ {
		if (s[i] == '4' || s[i] == '5') && isDigit(s[i+1]) && isDigit(s[i+2]) &&
			(i == 0 || !isWordByte(s[i-1])) && (i+3 == len(s) || !isWordByte(s[i+3])) {
			return s[i : i+3]
		}
	}
	var buf [maxLineBytes + 8]byte
	if len(s) > maxLineBytes {
		s = s[:maxLineBytes]
	}
	ls := string(lowerInto(buf[:0], s))
	for _, sw := range statusWords {
		if strings.Contains(ls, sw.word) {
			return sw.code
		}
	}
	return ""
}

// similarity is the Jaccard index of the word sets of two lines.
func similarity(a, b string) float64 {
	wa := map[string]bool{}
	for _, w := range strings.FieldsFunc(a, func(r rune) bool { return r < 0x80 && !isWordByte(byte(r)) }) {
		wa[w] = true
	}
	if len(wa) == 0 {
		return 0
	}
	inter, union := 0, len(wa)
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(b, func(r rune) bool { return r < 0x80 && !isWordByte(byte(r)) }) {
		if seen[w] {
			continue
		}
		seen[w] = true
		if wa[w] {
			inter++
		} else {
			union++
		}
	}
	return float64(inter) / float64(union)
}

// renamed reports the one word that differs between two otherwise equal lines.
func renamed(a, b string) (string, string, bool) {
	split := func(s string) []string {
		return strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && !isWordByte(byte(r)) })
	}
	wa, wb := split(a), split(b)
	if len(wa) != len(wb) || len(wa) == 0 {
		return "", "", false
	}
	from, to := "", ""
	for i := range wa {
		if wa[i] != wb[i] {
			if from != "" && (from != wa[i] || to != wb[i]) {
				return "", "", false
			}
			from, to = wa[i], wb[i]
		}
	}
	// Only the word may differ, not the punctuation around it.
	if from == "" || strings.ReplaceAll(a, from, to) != b {
		return "", "", false
	}
	return from, to, true
}

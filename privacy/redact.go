package privacy

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

const markerPrefix = "[REDACTED:"

// hint bits say which detectors could match; scanHints computes them in one pass so that
// text without secrets never reaches a regular expression.
const (
	hintPEM uint32 = 1 << iota
	hintAWS
	hintGoogle
	hintGitHub
	hintGitLab
	hintSlack
	hintStripe
	hintSkDash
	hintJWT
	hintURL
	hintAssign
	hintUnderscore // npm_, hf_, whsec_, dop_v1_ …
	hintSendGrid
	hintTwilio
	hintPyPI
	hintPEMBody
	hintBase64
	hintCommandLine
	hintFlag   // a word starting with '-': redactCommandLine may find more once a marker shortened a command
	hintNetrc  // "password" then a blank
	hintPgpass // ":5432:" or ":*:"
	hintAzureAD
	hintK8sSecret // kind: Secret
)

// hints are what scanHints found: detector bits, and the anchors of moreShapes.
type hints struct {
	h    uint32
	more patternSet
}

// A pattern detects one shape of secret. Every shape starts with a literal anchor:
// strings.Index finds candidates and the regular expression, anchored there, only checks
// the rest. A regexp that starts with \b has no literal prefix, and Go then runs its NFA
// over the whole text at a few MB/s.
type pattern struct {
	kind   string
	hint   uint32
	anchor string
	re     *regexp.Regexp
}

func newPatterns(kind string, hint uint32, expr string, anchors ...string) []pattern {
	re := regexp.MustCompile(`^(?:` + expr + `)`)
	ps := make([]pattern, len(anchors))
	for i, a := range anchors {
		ps[i] = pattern{kind: kind, hint: hint, anchor: a, re: re}
	}
	return ps
}

// patterns run in order; the specific token shapes come before the generic assignments so
// the marker names the most precise kind. A match must start at a word boundary. They are
// compiled on the first text with a hint, not at init: most hook processes (session start,
// a prompt without a token shape) never run them, and compiling them all costs about a
// thousand allocations per process.
var patterns = sync.OnceValue(func() []pattern {
	return slices.Concat(
		newPatterns("aws-access-key-id", hintAWS, `[A-Z]{4}[0-9A-Z]{16}\b`, "AKIA", "ASIA", "ABIA", "ACCA"),
		newPatterns("google-api-key", hintGoogle, `AIza[0-9A-Za-z_\-]{30,}`, "AIza"),
		newPatterns("github-token", hintGitHub, `gh[pousr]_[A-Za-z0-9]{30,}`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
		newPatterns("github-token", hintGitHub, `github_pat_[A-Za-z0-9_]{30,}`, "github_pat_"),
		newPatterns("gitlab-token", hintGitLab, `glpat-[A-Za-z0-9_\-]{20,}`, "glpat-"),
		newPatterns("slack-token", hintSlack, `xox[abposr]-[A-Za-z0-9\-]{10,}`, "xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"),
		newPatterns("slack-token", hintSlack, `xapp-[0-9]+-[A-Za-z0-9\-]{10,}`, "xapp-"),
		newPatterns("slack-webhook", hintURL, `https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]+`, "https://hooks.slack.com/"),
		newPatterns("stripe-key", hintStripe, `[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`, "sk_live_", "rk_live_", "sk_test_", "rk_test_"),
		newPatterns("anthropic-key", hintSkDash, `sk-ant-[A-Za-z0-9_\-]{20,}`, "sk-ant-"),
		newPatterns("openai-key", hintSkDash, `sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{20,})`, "sk-"),
		newPatterns("npm-token", hintUnderscore, `npm_[A-Za-z0-9]{36}\b`, "npm_"),
		newPatterns("huggingface-token", hintUnderscore, `hf_[A-Za-z0-9]{30,}`, "hf_"),
		newPatterns("webhook-secret", hintUnderscore, `whsec_[A-Za-z0-9+/=]{20,}`, "whsec_"),
		newPatterns("digitalocean-token", hintUnderscore, `do[opr]_v1_[a-f0-9]{64}`, "dop_v1_", "doo_v1_", "dor_v1_"),
		newPatterns("sendgrid-key", hintSendGrid, `SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}`, "SG."),
		newPatterns("twilio-key", hintTwilio, `SK[0-9a-fA-F]{32}\b`, "SK"),
		newPatterns("pypi-token", hintPyPI, `pypi-AgE[A-Za-z0-9_\-]{50,}`, "pypi-"),
	)
})

// Redact replaces detected secrets with a [REDACTED:kind] marker.
func Redact(s string) string {
	hs := scanHints(s)
	if hs.h == 0 && hs.more.empty() {
		return s
	}
	h := hs.h
	in := s
	out := redactMore(s, hs)
	if out != s {
		// A marker ends a word where the token went on: a key just after it ("…]_token=x")
		// is a key now, too long before. Every other hint holds for the new text as it
		// did for the old: it never needs a word start, and markers bring no new ones.
		h |= hintAssign
	}
	s = out
	if h&hintPEM != 0 {
		out = redactPEM(out)
	}
	if h&hintPEMBody != 0 {
		out = redactPEMBody(out)
	}
	ps := patterns()
	for i := range ps {
		p := &ps[i]
		if h&p.hint != 0 {
			out = p.replace(out)
		}
	}
	if h&hintJWT != 0 {
		out = redactJWT(out)
	}
	if h&hintBase64 != 0 {
		out = redactBase64Secrets(out)
	}
	if h&hintAssign != 0 || len(out) != len(s) || out != s {
		out = redactAssignments(out)
	}
	if h&hintCommandLine != 0 || h&hintFlag != 0 && out != in {
		out = redactCommandLine(out)
	}
	if h&hintURL != 0 {
		// After the assignments, so that "DSN=postgres://u:p@h" is one secret.
		out = redactURLCredentials(out)
	}
	return out
}

// Kinds found by the hand-written scanners; the token patterns carry their own.
const (
	kindPrivateKey     = "private-key"
	kindJWT            = "jwt"
	kindURLCredentials = "url-credentials"
	kindSecret         = "secret"
	kindAuthorization  = "authorization"
	kindAWSSecret      = "aws-secret-access-key"
)

// A splice builds s with ranges replaced by [REDACTED:kind] markers. Every detector
// scans in its own way but shares this output: nothing is allocated until the first
// replacement, so text without that secret comes back as s itself.
type splice struct {
	s    string
	out  []byte
	last int // s[last:] is not copied to out yet
}

// replace puts the marker of kind in place of s[start:end]; ranges come in order.
func (sp *splice) replace(start, end int, kind string) {
	if sp.out == nil {
		sp.out = make([]byte, 0, len(sp.s)+32)
	}
	sp.out = append(sp.out, sp.s[sp.last:start]...)
	sp.out = append(sp.out, markerPrefix...)
	sp.out = append(sp.out, kind...)
	sp.out = append(sp.out, ']')
	sp.last = end
}

func (sp *splice) String() string {
	if sp.out == nil {
		return sp.s
	}
	return string(append(sp.out, sp.s[sp.last:]...))
}

// redactJWT replaces "eyJ…" + "." + 5 or more + "." + any, in base64url. It is a scanner
// because a failed match can only be known at the end of a long run ("eyJa-eyJa-…"
// without a dot); resuming after that point keeps it linear, which a regexp anchored at
// each "eyJ" would not be.
func redactJWT(s string) string {
	sp := splice{s: s}
	for i := 0; ; {
		k := strings.Index(s[i:], "eyJ")
		if k < 0 {
			break
		}
		pos := i + k
		i = pos + 1
		if pos > 0 && isWordByte(s[pos-1]) {
			continue
		}
		e1 := base64URLRun(s, pos)
		if e1-pos < 8 || e1 >= len(s) || s[e1] != '.' {
			i = max(i, e1) // every "eyJ" inside this run ends the same way
			continue
		}
		e2 := base64URLRun(s, e1+1)
		if e2-(e1+1) < 5 || e2 >= len(s) || s[e2] != '.' {
			i = max(i, e2)
			continue
		}
		end := base64URLRun(s, e2+1)
		sp.replace(pos, end, kindJWT)
		i = end
	}
	return sp.String()
}

func base64URLRun(s string, i int) int {
	for i < len(s) && (isWordByte(s[i]) || s[i] == '-') {
		i++
	}
	return i
}

// redactPEM replaces every "-----BEGIN … PRIVATE KEY-----" block up to its matching
// "-----END … PRIVATE KEY-----" line, or to the end of s when that never comes. An END
// line with no BEGIN before it ends a key that began in an earlier part of the record
// (Edit's old_string, a previous text part): it is redacted back to the start of s, the
// mirror of the rule for a missing END. It is a scanner rather than a lazy regular
// expression because RE2 takes ~250 ns a byte on it.
func redactPEM(s string) string {
	sp := splice{s: s}
	// The first private END line at or after i; each search resumes where the last one
	// ended, so the whole scan stays linear.
	endAt, endEnd := privateEnd(s, 0)
	for i := 0; i < len(s); {
		if endAt >= 0 && endAt < i {
			endAt, endEnd = privateEnd(s, i)
		}
		k := strings.Index(s[i:], "-----BEGIN")
		if endAt >= 0 && (k < 0 || endAt < i+k) {
			sp.replace(sp.last, endEnd, kindPrivateKey)
			i = endEnd
			continue
		}
		if k < 0 {
			break
		}
		start := i + k
		hdrEnd, ok := pemPrivateLabel(s, start+len("-----BEGIN"))
		if !ok {
			i = start + len("-----BEGIN")
			continue
		}
		if endAt >= 0 && endAt < hdrEnd {
			endAt, endEnd = privateEnd(s, hdrEnd)
		}
		end := len(s)
		if endAt >= 0 {
			end = endEnd
		}
		sp.replace(start, end, kindPrivateKey)
		i = end
	}
	return sp.String()
}

// privateEnd finds the first "-----END … PRIVATE KEY-----" line at or after i and returns
// its start and end, or -1.
func privateEnd(s string, i int) (int, int) {
	for {
		k := strings.Index(s[i:], "-----END")
		if k < 0 {
			return -1, 0
		}
		if e, ok := pemPrivateLabel(s, i+k+len("-----END")); ok {
			return i + k, e
		}
		i += k + len("-----END")
	}
}

// pemPrivateLabel checks that s[i:] is "[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----" and returns
// the offset after it.
func pemPrivateLabel(s string, i int) (int, bool) {
	j := i
	for j < len(s) && j-i < 64 && ('A' <= s[j] && s[j] <= 'Z' || '0' <= s[j] && s[j] <= '9' || s[j] == ' ') {
		j++
	}
	label := s[i:j]
	if !strings.HasPrefix(s[j:], "-----") ||
		!(strings.HasSuffix(label, "PRIVATE KEY") || strings.HasSuffix(label, "PRIVATE KEY BLOCK")) {
		return 0, false
	}
	return j + len("-----"), true
}

func (p *pattern) replace(s string) string {
	sp := splice{s: s}
	for i := 0; ; {
		k := strings.Index(s[i:], p.anchor)
		if k < 0 {
			break
		}
		pos := i + k
		i = pos + 1
		if pos > 0 && isWordByte(s[pos-1]) {
			continue
		}
		m := p.re.FindStringIndex(s[pos:])
		if m == nil {
			continue
		}
		i = pos + m[1]
		sp.replace(pos, i, p.kind)
	}
	return sp.String()
}

// redactURLCredentials replaces the "user:password" of every "scheme://user:password@".
func redactURLCredentials(s string) string {
	sp := splice{s: s}
	for i := 0; ; {
		k := strings.Index(s[i:], "://")
		if k < 0 {
			break
		}
		pos := i + k
		i = pos + 3
		if pos == 0 || !isSchemeByte(s[pos-1]) {
			continue
		}
		start := pos + 3
		colon := start
		for colon < len(s) && !isUserinfoStop(s[colon]) && s[colon] != ':' {
			colon++
		}
		if colon >= len(s) || s[colon] != ':' {
			continue // no password; an empty user is fine (redis://:PASSWORD@host)
		}
		at := colon + 1
		for at < len(s) && !isUserinfoStop(s[at]) {
			at++
		}
		if at == colon+1 || at >= len(s) || s[at] != '@' {
			continue
		}
		sp.replace(start, at, kindURLCredentials)
		i = at
	}
	return sp.String()
}

func isSchemeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'
}

// isUserinfoStop ends the user or the password part of a URL.
func isUserinfoStop(c byte) bool {
	switch c {
	case '/', '@', '"', '\'', '[', ']', ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

// triggers are the bytes at which scanHints looks closer: trigBase64 marks those that
// are also the trigger byte of a base64 anchor. Built on first use, as every table here:
// each memnode process pays its package inits, redacting or not.
var triggers = sync.OnceValue(buildTriggers)

const (
	trigHere uint8 = 1 << iota
	trigBase64
)

func buildTriggers() *[256]uint8 {
	t := new([256]uint8)
	// '.' and 'p' are in moreTriggers; 'w' is .netrc's "password".
	for _, c := range []byte("-_AJ:=GKIB.pw~" + moreTriggers) {
		t[c] = trigHere
	}
	for c, as := range base64Index() {
		if len(as) > 0 {
			t[c] |= trigHere | trigBase64
		}
	}
	return t
}

// scanHints returns the detectors that might match s. It may say yes wrongly, never no
// wrongly.
func scanHints(s string) hints {
	var hs hints
	var h uint32
	var as assignScanner
	more := moreIdx()
	trig := triggers()
	for i := 0; i < len(s); i++ {
		c := s[i]
		t := trig[c]
		if t == 0 {
			continue
		}
		if t&trigBase64 != 0 && h&hintBase64 == 0 && base64AnchorAt(s, i) {
			h |= hintBase64
		}
		switch c {
		case '-':
			more.find(s, i, &hs.more)
			if h&hintCommandLine == 0 && commandLineHint(s, i) {
				// A flag ("-rw-r--r--" and "--- PASS" are words that start so): a secret
				// is given to it here, or may be once a marker shortened the command.
				h |= hintFlag
				if cmdLineSecret(s, i) {
					h |= hintCommandLine
				}
			}
			switch {
			case h&hintPEM == 0 && strings.HasPrefix(s[i:], "-----") &&
				(strings.HasPrefix(s[i+5:], "BEGIN") || strings.HasPrefix(s[i+5:], "END")):
				h |= hintPEM
			case i >= 4 && s[i-4:i] == "pypi":
				h |= hintPyPI
			case i >= 2 && s[i-2:i] == "sk":
				h |= hintSkDash
			case i >= 5 && s[i-5:i] == "glpat":
				h |= hintGitLab
			case i >= 4 && (s[i-4:i-1] == "xox" || s[i-4:i] == "xapp"):
				h |= hintSlack
			}
		case '_':
			more.find(s, i, &hs.more)
			switch {
			case i >= 3 && s[i-3:i-1] == "gh", i >= 6 && s[i-6:i] == "github":
				h |= hintGitHub
			case i >= 2 && (s[i-2:i] == "sk" || s[i-2:i] == "rk"):
				h |= hintStripe
			case i >= 2 && s[i-2:i] == "hf", i >= 3 && (s[i-3:i] == "npm" || s[i-3:i] == "dop" || s[i-3:i] == "doo" || s[i-3:i] == "dor"),
				i >= 5 && s[i-5:i] == "whsec":
				h |= hintUnderscore
			}
		case '.', 'p':
			more.find(s, i, &hs.more)
		case 'w':
			if i >= 4 && strings.HasPrefix(s[i-4:], "password") && i+4 < len(s) && (s[i+4] == ' ' || s[i+4] == '\t') {
				h |= hintNetrc
			}
		case 'G':
			if i >= 1 && s[i-1] == 'S' && i+1 < len(s) && s[i+1] == '.' {
				h |= hintSendGrid
			}
		case 'K':
			if i >= 1 && s[i-1] == 'S' {
				h |= hintTwilio
			}
			more.find(s, i, &hs.more)
		case '~':
			if h&hintAzureAD == 0 && azureADSecretAt(s, i-5) {
				h |= hintAzureAD
			}
		case 'I', 'B':
			if pemBodyHint(s, i) {
				h |= hintPEMBody
			}

		case 'A':
			if len(s)-i >= 4 {
				switch s[i : i+4] {
				case "AKIA", "ASIA", "ABIA", "ACCA":
					h |= hintAWS
				case "AIza":
					h |= hintGoogle
				}
			}
			more.find(s, i, &hs.more)
		case 'J':
			if i >= 2 && s[i-2:i] == "ey" {
				h |= hintJWT
			}
			more.find(s, i, &hs.more)
		case ':', '=':
			more.find(s, i, &hs.more)
			if c == ':' {
				if strings.HasPrefix(s[i:], "://") {
					h |= hintURL
				}
				if h&hintPgpass == 0 && pgpassPort(s, i) {
					h |= hintPgpass
				}
				if h&hintK8sSecret == 0 && k8sSecretKindAt(s, i) {
					h |= hintK8sSecret
				}
			}
			if h&hintAssign == 0 {
				if _, ok := as.parse(s, i); ok {
					h |= hintAssign
				}
			}
		}
	}
	hs.h = h
	return hs
}

// pgpassPort reports whether the ':' at s[i] starts the port field of a .pgpass line:
// ":5432:" or ":*:".
func pgpassPort(s string, i int) bool {
	p := i + 1
	n := p
	for n < len(s) && n-p < 5 && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n > p && n < len(s) && s[n] == ':' || p+1 < len(s) && s[p] == '*' && s[p+1] == ':'
}

// redactAssignments replaces the value of every "key=value", "key: value", "export key=value",
// "key": "value" … whose key names a secret.
func redactAssignments(s string) string {
	sp := splice{s: s}
	var as assignScanner
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '=' && c != ':' {
			continue
		}
		a, ok := as.parse(s, i)
		if !ok {
			continue
		}
		sp.replace(a.start, a.end, a.kind)
		i = a.end - 1
	}
	return sp.String()
}

// An assignment is a value to redact: s[start:end], of the given kind.
type assignment struct {
	kind       string
	start, end int
}

const maxKeyLen = 64

// An assignScanner parses the assignments of one string. It remembers where the last
// searches for a value's end stopped: a long line full of rejected assignments
// ("token: token: token: …,") would otherwise be rescanned at every separator.
type assignScanner struct {
	colonEnd, equalEnd, paren nextStop
}

// nextStop memoizes "the first stop byte at or after p": no stop byte lies in [from, at).
type nextStop struct{ from, at int }

func (n *nextStop) find(s string, p int, stop func(byte) bool) int {
	if n.at > 0 && n.from <= p && p <= n.at {
		return n.at
	}
	e := p
	for e < len(s) && !stop(s[e]) {
		e++
	}
	n.from, n.at = p, e
	return e
}

func isColonValueStop(c byte) bool {
	return c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '`'
}

func isParen(c byte) bool { return c == '(' || c == ')' }

// parse looks at the separator s[i] (':' or '=') and reports the value to redact when the
// key before it names a secret and the value after it looks like data, not code.
func (as *assignScanner) parse(s string, i int) (assignment, bool) {
	sep := s[i]
	var prev, next, next2 byte
	if i > 0 {
		prev = s[i-1]
	}
	if i+1 < len(s) {
		next = s[i+1]
	}
	if i+2 < len(s) {
		next2 = s[i+2]
	}
	if sep == ':' {
		// := and :: are code; :// is a URL scheme.
		if next == '=' || next == ':' || prev == ':' || (next == '/' && next2 == '/') {
			return assignment{}, false
		}
	} else {
		if next == '=' || next == '>' || next == '~' {
			return assignment{}, false
		}
		switch prev {
		case '=', '!', '<', '>', ':', '+', '-', '*', '/', '%', '&', '|', '^', '~', '?':
			return assignment{}, false
		}
	}

	// The key: an identifier, optionally quoted, possibly followed by blanks.
	j := i
	for n := 0; j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') && n < 4; n++ {
		j--
	}
	spaced := j < i
	var quote byte
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		quote = s[j-1]
		j--
	}
	keyEnd := j
	for j > 0 && keyEnd-j <= maxKeyLen && isKeyByte(s[j-1]) {
		j--
	}
	if j == keyEnd || keyEnd-j > maxKeyLen {
		return assignment{}, false
	}
	if quote != 0 && (j == 0 || s[j-1] != quote) {
		return assignment{}, false
	}
	kind := classifyKey(s[j:keyEnd])
	if kind == "" {
		return assignment{}, false
	}
	if sep == ':' && quote == 0 && !spaced && isProseVerb(s, j, keyEnd) {
		return assignment{}, false
	}

	// The value.
	p := i + 1
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if p < len(s) && (s[p] == '"' || s[p] == '\'') {
		q := s[p]
		start := p + 1
		e := start
		for e < len(s) && s[e] != q && s[e] != '\n' {
			if s[e] == '\\' && e+1 < len(s) && s[e+1] != '\n' {
				e++
			}
			e++
		}
		return checkValue(s, kind, start, e, true, sep, spaced)
	}
	if strings.HasPrefix(s[p:], markerPrefix) {
		return assignment{}, false
	}
	var e int
	if sep == '=' && kind != kindAuthorization {
		e = as.equalEnd.find(s, p, isValueStop)
	} else {
		e = as.colonEnd.find(s, p, isColonValueStop)
		for e > p && (s[e-1] == ' ' || s[e-1] == '\t') {
			e--
		}
	}
	// Applies to every kind: an inner value must never be redacted where the value around
	// it was rejected, or a second Redact would see a different text (idempotence).
	if as.paren.find(s, p, isParen) < e {
		return assignment{}, false
	}
	return checkValue(s, kind, p, e, false, sep, spaced)
}

// isProseVerb reports a key s[j:keyEnd] that is the verb "pass" of a sentence, as in
// "Tests pass: go test ./..." or "all 12 checks pass: ok": a word and one blank come
// before it on its line. A "pass:" key starts its line or its indentation, or follows
// punctuation ("{pass: …"); DB_PASS, db.pass and "pass" in quotes stay keys.
func isProseVerb(s string, j, keyEnd int) bool {
	if !strings.EqualFold(s[j:keyEnd], "pass") || j < 2 || s[j-1] != ' ' {
		return false
	}
	c := s[j-2]
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// checkValue decides whether s[start:end] is worth redacting.
func checkValue(s, kind string, start, end int, quoted bool, sep byte, spaced bool) (assignment, bool) {
	v := s[start:end]
	if kind == kindAuthorization {
		// Keep the scheme ("Bearer", "Basic" …): it says what kind of credential it was.
		if sp := strings.IndexAny(v[:min(len(v), 25)], " \t"); sp > 0 && sp <= 24 && isSchemeWord(v[:sp]) {
			skip := sp
			for skip < len(v) && (v[skip] == ' ' || v[skip] == '\t') {
				skip++
			}
			start += skip
			v = v[skip:]
		}
	}
	if kind == kindAuthorization && isAuthScheme(v) {
		return assignment{}, false // "Authorization: Bearer" with nothing after it
	}
	if v == "" || strings.HasPrefix(v, markerPrefix) || isPlaceholder(v) {
		return assignment{}, false
	}
	if !quoted {
		switch v[len(v)-1] {
		case ',', ';', '{', '[':
			// "Token: tok," — a struct literal or an object in code.
			return assignment{}, false
		}
		if sep == '=' && spaced && isIdentPath(v) && strings.IndexByte(v, '.') >= 0 {
			// "password = cfg.Password"
			return assignment{}, false
		}
	}
	return assignment{kind: kind, start: start, end: end}, true
}

func isKeyByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

func isValueStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', '"', '\'', '`', '&', ';', ',', ')', '}', '<', '>':
		return true
	}
	return false
}

func isSchemeWord(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

func isAuthScheme(w string) bool {
	if len(w) > len("negotiate") {
		return false
	}
	switch strings.ToLower(w) {
	case "bearer", "basic", "token", "bot", "digest", "negotiate", "ntlm", "apikey":
		return true
	}
	return false
}

func isIdentPath(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	c := v[0]
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}

// isPlaceholder reports values that are references, literals or types rather than secrets.
func isPlaceholder(v string) bool {
	switch v[0] {
	case '$', '{', '(', '[', '<', '%', '*', '&', '!', '#':
		return true
	}
	digits := true
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('0' <= c && c <= '9' || c == '.' || c == '-') {
			digits = false
			break
		}
	}
	if digits {
		return true
	}
	if len(v) > 9 {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "null", "nil", "none", "undefined", "yes", "no", "on", "off",
		"string", "str", "int", "number", "bool", "boolean", "any", "bytes", "object",
		"required", "optional", "redacted":
		return true
	}
	return false
}

// secretWords are looked for inside key names (lower case). A word followed by a letter
// of the same case is part of a longer word (tokens, author, passenger) and does not
// count; the short ones must also start a word (bypass).
var secretWords = [...]struct {
	word      string
	wordStart bool
}{
	{"password", false},
	{"passwd", false},
	{"passphrase", false},
	{"pass", true},
	{"secret", false},
	{"token", false},
	{"apikey", false},
	{"api_key", false},
	{"api-key", false},
	{"accesskey", false},
	{"access_key", false},
	{"access-key", false},
	{"privatekey", false},
	{"private_key", false},
	{"private-key", false},
	{"credential", false},
	{"auth", true},
	{"dsn", true},
	{"cookie", true},
}

// secretWordsAt lists the secretWords by their first byte.
var secretWordsAt = sync.OnceValue(func() *[256][]uint8 {
	t := new([256][]uint8)
	for i, w := range secretWords {
		t[w.word[0]] = append(t[w.word[0]], uint8(i))
	}
	return t
})

// classifyKey returns the kind of secret a key name announces, or "".
func classifyKey(key string) string {
	key = strings.TrimLeft(key, "-")
	if len(key) < len("dsn") || len(key) > maxKeyLen {
		return ""
	}
	var buf [maxKeyLen]byte
	lower := buf[:len(key)]
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	l := string(lower) // does not escape; the compiler avoids the copy for comparisons
	if l == "authorization" || l == "proxy-authorization" {
		return kindAuthorization
	}
	if !hasSecretWord(key, l) {
		return ""
	}
	if strings.Contains(l, "secret") && (strings.Contains(l, "access") || strings.Contains(l, "aws")) {
		return kindAWSSecret
	}
	return kindSecret
}

// hasSecretWord reports whether one of secretWords is in key (l is key in lower case) as a
// word: one pass over the key, looking up the words that start with each byte.
func hasSecretWord(key, l string) bool {
	for k := 0; k < len(l); k++ {
		for _, wi := range secretWordsAt()[l[k]] {
			if strings.HasPrefix(l[k:], secretWords[wi].word) && isWordAt(key, l, int(wi), k) {
				return true
			}
		}
	}
	return false
}

// isWordAt reports whether secretWords[wi], found at key[k:], stands as a word there: a
// letter of the same case after it makes it part of a longer word (tokens, author), and
// before it too for the short ones (bypass).
func isWordAt(key, l string, wi, k int) bool {
	w := secretWords[wi]
	e := k + len(w.word)
	if e < len(key) && sameCaseLetters(key[e-1], key[e]) && !(w.word == "credential" && l[e] == 's') {
		return false
	}
	return !w.wordStart || k == 0 || !sameCaseLetters(key[k-1], key[k])
}

func sameCaseLetters(a, b byte) bool {
	return 'a' <= a && a <= 'z' && 'a' <= b && b <= 'z' || 'A' <= a && a <= 'Z' && 'A' <= b && b <= 'Z'
}

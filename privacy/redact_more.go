package privacy

import (
	"regexp"
	"strings"
	"sync"
)

// A shape is one token format: the literal anchors it starts with and the expression
// of the whole token (anchor included).
type shape struct {
	kind, expr string
	anchors    []string
}

// moreShapes are the token shapes of issue 26 (cloud, CI and SaaS keys a coding session
// shows; shapes read from gitleaks' and trufflehog's public rule lists, patterns our own).
// Every anchor starts a word, and scanHints finds them in its one pass over the text (see
// moreIndex): text without one never reaches a regular expression.
func moreShapes() []shape {
	return []shape{
		{"azure-storage-key", `AccountKey=[A-Za-z0-9+/]{40,}={0,2}`, []string{"AccountKey="}},
		{"azure-sas-token", `sig=[A-Za-z0-9%+/]{30,}(?:%3[dD]|=){0,2}`, []string{"sig="}},
		{"google-oauth-token", `ya29\.[0-9A-Za-z_\-]{20,}`, []string{"ya29."}},
		{"google-oauth-secret", `GOCSPX-[A-Za-z0-9_\-]{20,}`, []string{"GOCSPX-"}},
		{"vault-token", `hv[sbr]\.[A-Za-z0-9_\-]{20,}`, []string{"hvs.", "hvb.", "hvr."}},
		{"atlassian-token", `ATATT3[A-Za-z0-9_\-=]{40,}`, []string{"ATATT3"}},
		{"shopify-token", `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, []string{"shpat_", "shpca_", "shppa_", "shpss_"}},
		// A PEM block in base64 (kubeconfig client-key-data, Kubernetes secrets).
		{"private-key", `LS0tLS1CRUdJT[A-Za-z0-9+/=]{20,}`, []string{"LS0tLS1CRUdJT"}},
		{"putty-private-key", `PuTTY-User-Key-File-[23]:[\s\S]*?(?:Private-MAC:[ \t]*[0-9a-fA-F]+|\z)`, []string{"PuTTY-User-Key-File-"}},
		{"age-secret-key", `AGE-SECRET-KEY-1[0-9A-Z]{58}`, []string{"AGE-SECRET-KEY-1"}},
		{"databricks-token", `dapi[a-f0-9]{32}(?:-[0-9]+)?`, []string{"dapi"}},
		{"linear-api-key", `lin_api_[A-Za-z0-9]{40}`, []string{"lin_api_"}},
		{"postman-key", `PMAK-[a-f0-9]{24}-[a-f0-9]{34}`, []string{"PMAK-"}},
		{"grafana-token", `(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8})`, []string{"glc_", "glsa_"}},
		{"gitlab-token", `gl(?:ptt|dt|rt|ft|oas|cbt|imt|soat|agent)-[A-Za-z0-9_\-]{20,}`, []string{"glptt-", "gldt-", "glrt-", "glft-", "gloas-", "glcbt-", "glimt-", "glsoat-", "glagent-"}},
		{"dockerhub-token", `dckr_pat_[A-Za-z0-9_\-]{27,}`, []string{"dckr_pat_"}},
		{"groq-key", `gsk_[A-Za-z0-9]{52}`, []string{"gsk_"}},
		{"replicate-token", `r8_[A-Za-z0-9]{37}`, []string{"r8_"}},
		{"xai-key", `xai-[A-Za-z0-9]{80}`, []string{"xai-"}},
		{"perplexity-key", `pplx-[A-Za-z0-9]{48}`, []string{"pplx-"}},
		{"supabase-token", `sbp_[a-f0-9]{40}`, []string{"sbp_"}},
		{"pulumi-token", `pul-[a-f0-9]{40}`, []string{"pul-"}},
		{"planetscale-token", `pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.=]{32,64}`, []string{"pscale_"}},
		{"newrelic-key", `NRAK-[A-Z0-9]{27}`, []string{"NRAK-"}},
		{"doppler-token", `dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}`, []string{"dp."}},
		{"heroku-key", `HRKU-[A-Za-z0-9_\-]{20,}`, []string{"HRKU-"}},
		{"notion-token", `(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})`, []string{"ntn_", "secret_"}},
		{"sentry-token", `(?:sntrys_[A-Za-z0-9+/=_]{40,}|sntryu_[a-f0-9]{64})`, []string{"sntrys_", "sntryu_"}},
		{"square-token", `(?:sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}|EAAA[A-Za-z0-9_\-]{60})`, []string{"sq0atp-", "sq0csp-", "EAAA"}},
		{"fly-token", `(?:fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/=_]{40,})`, []string{"fo1_", "fm1_", "fm2_", "fm1a_", "fm2a_", "fm1r_", "fm2r_"}},
		{"mailgun-key", `key-[0-9a-f]{32}`, []string{"key-"}},
		{"airtable-token", `pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`, []string{"pat"}},
		{"telegram-bot-token", `bot[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}`, []string{"bot"}},
	}
}

// morePatterns are moreShapes compiled, one pattern per anchor in moreIndex's order. They
// are compiled on the first text that holds an anchor, not when the index is built: most
// hook processes never run them.
var morePatterns = sync.OnceValue(func() []pattern {
	var ps []pattern
	for _, sh := range moreShapes() {
		ps = append(ps, newPatterns(sh.kind, 0, sh.expr, sh.anchors...)...)
	}
	return ps
})

// A patternSet holds a bit per pattern of morePatterns.
type patternSet [4]uint64

func (ps *patternSet) add(i int)     { ps[i/64] |= 1 << (i % 64) }
func (ps patternSet) has(i int) bool { return ps[i/64]&(1<<(i%64)) != 0 }
func (ps patternSet) empty() bool    { return ps[0]|ps[1]|ps[2]|ps[3] == 0 }

// moreTriggers are the bytes at which scanHints looks for moreShapes' anchors. An anchor is
// found at the first of them it holds after its first byte, by that byte and the one
// before it ("ya29." at "9.", "shpat_" at "hp", "ATATT3" at "TA", "dapi" at "ap").
const moreTriggers = "_-.=:AJp"

// moreIndex finds the anchors of moreShapes in scanHints' one pass: at a byte of
// moreTriggers, the pair it ends looks up the anchors that hold that pair at their
// trigger, and only those are compared. Two anchors have no trigger byte of their own and
// are found at the byte after them: Airtable's "pat" at its dot 17 bytes on, Telegram's
// "bot" at the ':' after its digits. TestMoreAnchorsAllFound checks every anchor.
type moreIndex struct {
	anchors  []string
	slot     [1 << 16]uint8 // 1 + index into lists; 0: no anchor holds the pair
	lists    [][]pairAnchor
	pat, bot int // the anchors found by their own rules
}

// A pairAnchor is anchor k, its trigger byte at offset t.
type pairAnchor struct{ k, t int }

var moreIdx = sync.OnceValue(func() *moreIndex {
	idx := &moreIndex{pat: -1, bot: -1}
	for _, sh := range moreShapes() {
		idx.anchors = append(idx.anchors, sh.anchors...)
	}
	if len(idx.anchors) > len(patternSet{})*64 {
		panic("privacy: more anchors than a patternSet holds")
	}
	for k, a := range idx.anchors {
		switch a {
		case "pat":
			idx.pat = k
			continue
		case "bot":
			idx.bot = k
			continue
		}
		t := 1 + strings.IndexAny(a[1:], moreTriggers)
		if t == 0 {
			panic("privacy: anchor " + a + " has no trigger byte")
		}
		pair := uint16(a[t-1])<<8 | uint16(a[t])
		if idx.slot[pair] == 0 {
			idx.lists = append(idx.lists, nil)
			idx.slot[pair] = uint8(len(idx.lists))
		}
		idx.lists[idx.slot[pair]-1] = append(idx.lists[idx.slot[pair]-1], pairAnchor{k, t})
	}
	return idx
})

// find adds the anchors found at s[i], a byte of moreTriggers.
func (idx *moreIndex) find(s string, i int, hits *patternSet) {
	if i == 0 {
		return
	}
	if slot := idx.slot[uint16(s[i-1])<<8|uint16(s[i])]; slot != 0 {
		for _, pa := range idx.lists[slot-1] {
			if j := i - pa.t; j >= 0 && wordStart(s, j) && strings.HasPrefix(s[j:], idx.anchors[pa.k]) {
				hits.add(pa.k)
			}
		}
	}
	switch s[i] {
	case '.':
		// Airtable: "pat", 14 letters or digits, the dot.
		if j := i - 17; j >= 0 && s[j] == 'p' && s[j+1] == 'a' && s[j+2] == 't' && wordStart(s, j) {
			hits.add(idx.pat)
		}
	case ':':
		// Telegram: "bot", 8 to 10 digits, the colon.
		j := i
		for j > 0 && i-j <= 10 && '0' <= s[j-1] && s[j-1] <= '9' {
			j--
		}
		if n := i - j; n >= 8 && n <= 10 && j >= 3 && s[j-3:j] == "bot" && wordStart(s, j-3) {
			hits.add(idx.bot)
		}
	}
}

func wordStart(s string, j int) bool { return j == 0 || !wordByte[s[j-1]] }

// wordByte is isWordByte as a table.
var wordByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isWordByte(byte(c))
	}
	return t
}()

// redactMore replaces the shapes of moreShapes that scanHints found, .netrc password fields
// and .pgpass passwords.
func redactMore(s string, h hints) string {
	out := s
	if !h.more.empty() {
		ps := morePatterns()
		for i := range ps {
			if h.more.has(i) {
				out = ps[i].replace(out)
			}
		}
	}
	if h.h&hintNetrc != 0 {
		out = redactNetrc(out)
	}
	if h.h&hintPgpass != 0 {
		out = redactPgpass(out)
	}
	return out
}

// redactNetrc replaces the password of a .netrc entry: "machine H login U password P"
// (on one line or several), the token after the word "password" when the entry's words
// "machine" or "login" come before it.
func redactNetrc(s string) string {
	sp := splice{s: s}
	for i := 0; ; {
		k := strings.Index(s[i:], "password")
		if k < 0 {
			break
		}
		pos := i + k
		i = pos + len("password")
		if pos > 0 && !isBlank(s[pos-1]) || i >= len(s) || s[i] != ' ' && s[i] != '\t' {
			continue
		}
		before := s[max(0, pos-512):pos]
		if !strings.Contains(before, "login ") || !strings.Contains(before, "machine ") && !strings.Contains(before, "default ") {
			continue
		}
		start := i
		for start < len(s) && (s[start] == ' ' || s[start] == '\t') {
			start++
		}
		end := start
		for end < len(s) && !isBlank(s[end]) {
			end++
		}
		if end == start || strings.HasPrefix(s[start:end], markerPrefix) || start < sp.last {
			continue
		}
		sp.replace(start, end, kindSecret)
		i = end
	}
	return sp.String()
}

// pgpassLine is a .pgpass line: host:port:database:user:password, the port a number or *.
var pgpassLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^[ \t]*[A-Za-z0-9_.\-*\[\]]+:(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:(\S+)[ \t]*$`)
})

// redactPgpass replaces the password field of .pgpass lines.
func redactPgpass(s string) string {
	sp := splice{s: s}
	for _, m := range pgpassLine().FindAllStringSubmatchIndex(s, -1) {
		if strings.HasPrefix(s[m[2]:m[3]], markerPrefix) || m[2] < sp.last {
			continue
		}
		sp.replace(m[2], m[3], kindSecret)
	}
	return sp.String()
}

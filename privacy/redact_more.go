package privacy

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// morePatterns are the token shapes of issue 26 (cloud, CI and SaaS keys a coding session
// shows; shapes read from gitleaks' and trufflehog's public rule lists, patterns our own).
// Each starts with a literal anchor, found by strings.Index: text without one never
// reaches a regular expression.
var morePatterns = sync.OnceValue(func() []pattern {
	return slices.Concat(
		newPatterns("azure-storage-key", 0, `AccountKey=[A-Za-z0-9+/]{40,}={0,2}`, "AccountKey="),
		newPatterns("azure-sas-token", 0, `sig=[A-Za-z0-9%+/]{30,}(?:%3[dD]|=){0,2}`, "sig="),
		newPatterns("google-oauth-token", 0, `ya29\.[0-9A-Za-z_\-]{20,}`, "ya29."),
		newPatterns("google-oauth-secret", 0, `GOCSPX-[A-Za-z0-9_\-]{20,}`, "GOCSPX-"),
		newPatterns("vault-token", 0, `hv[sbr]\.[A-Za-z0-9_\-]{20,}`, "hvs.", "hvb.", "hvr."),
		newPatterns("atlassian-token", 0, `ATATT3[A-Za-z0-9_\-=]{40,}`, "ATATT3"),
		newPatterns("shopify-token", 0, `shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`, "shpat_", "shpca_", "shppa_", "shpss_"),
		// A PEM block in base64 (kubeconfig client-key-data, Kubernetes secrets).
		newPatterns("private-key", 0, `LS0tLS1CRUdJT[A-Za-z0-9+/=]{20,}`, "LS0tLS1CRUdJT"),
		newPatterns("putty-private-key", 0, `PuTTY-User-Key-File-[23]:[\s\S]*?(?:Private-MAC:[ \t]*[0-9a-fA-F]+|\z)`, "PuTTY-User-Key-File-"),
		newPatterns("age-secret-key", 0, `AGE-SECRET-KEY-1[0-9A-Z]{58}`, "AGE-SECRET-KEY-1"),
		newPatterns("databricks-token", 0, `dapi[a-f0-9]{32}(?:-[0-9]+)?`, "dapi"),
		newPatterns("linear-api-key", 0, `lin_api_[A-Za-z0-9]{40}`, "lin_api_"),
		newPatterns("postman-key", 0, `PMAK-[a-f0-9]{24}-[a-f0-9]{34}`, "PMAK-"),
		newPatterns("grafana-token", 0, `(?:glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[a-fA-F0-9]{8})`, "glc_", "glsa_"),
		newPatterns("gitlab-token", 0, `gl(?:ptt|dt|rt|ft|oas|cbt|imt|soat|agent)-[A-Za-z0-9_\-]{20,}`, "glptt-", "gldt-", "glrt-", "glft-", "gloas-", "glcbt-", "glimt-", "glsoat-", "glagent-"),
		newPatterns("dockerhub-token", 0, `dckr_pat_[A-Za-z0-9_\-]{27,}`, "dckr_pat_"),
		newPatterns("groq-key", 0, `gsk_[A-Za-z0-9]{52}`, "gsk_"),
		newPatterns("replicate-token", 0, `r8_[A-Za-z0-9]{37}`, "r8_"),
		newPatterns("xai-key", 0, `xai-[A-Za-z0-9]{80}`, "xai-"),
		newPatterns("perplexity-key", 0, `pplx-[A-Za-z0-9]{48}`, "pplx-"),
		newPatterns("supabase-token", 0, `sbp_[a-f0-9]{40}`, "sbp_"),
		newPatterns("pulumi-token", 0, `pul-[a-f0-9]{40}`, "pul-"),
		newPatterns("planetscale-token", 0, `pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.=]{32,64}`, "pscale_"),
		newPatterns("newrelic-key", 0, `NRAK-[A-Z0-9]{27}`, "NRAK-"),
		newPatterns("doppler-token", 0, `dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}`, "dp."),
		newPatterns("heroku-key", 0, `HRKU-[A-Za-z0-9_\-]{20,}`, "HRKU-"),
		newPatterns("notion-token", 0, `(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})`, "ntn_", "secret_"),
		newPatterns("sentry-token", 0, `(?:sntrys_[A-Za-z0-9+/=_]{40,}|sntryu_[a-f0-9]{64})`, "sntrys_", "sntryu_"),
		newPatterns("square-token", 0, `(?:sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}|EAAA[A-Za-z0-9_\-]{60})`, "sq0atp-", "sq0csp-", "EAAA"),
		newPatterns("fly-token", 0, `(?:fo1_[A-Za-z0-9_\-]{43}|fm[12][ar]?_[A-Za-z0-9+/=_]{40,})`, "fo1_", "fm1_", "fm2_", "fm1a_", "fm2a_", "fm1r_", "fm2r_"),
		newPatterns("mailgun-key", 0, `key-[0-9a-f]{32}`, "key-"),
		newPatterns("airtable-token", 0, `pat[A-Za-z0-9]{14}\.[a-f0-9]{64}`, "pat"),
		newPatterns("telegram-bot-token", 0, `bot[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}`, "bot"),
	)
})

// wordByte is isWordByte as a table.
var wordByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isWordByte(byte(c))
	}
	return t
}()

// moreIndex maps the first two bytes of every anchor of morePatterns to the patterns
// that start so: one pass over the text, one table lookup a byte, finds which patterns can
// match at all.
type moreIndex struct {
	start [256]bool
	slot  [1 << 16]uint8 // 1 + index into lists; 0: no anchor starts so
	lists [][]int
}

var moreIdx = sync.OnceValue(func() *moreIndex {
	ps := morePatterns()
	if len(ps) > 64 {
		panic("privacy: more than 64 patterns in morePatterns")
	}
	idx := &moreIndex{}
	for i, p := range ps {
		k := uint16(p.anchor[0])<<8 | uint16(p.anchor[1])
		if idx.slot[k] == 0 {
			idx.lists = append(idx.lists, nil)
			idx.slot[k] = uint8(len(idx.lists))
		}
		idx.lists[idx.slot[k]-1] = append(idx.lists[idx.slot[k]-1], i)
		idx.start[p.anchor[0]] = true
	}
	return idx
})

// moreHits returns a bit per pattern of morePatterns whose anchor s holds at a word start.
func moreHits(s string) uint64 {
	idx := moreIdx()
	var hits uint64
	ps := morePatterns()
	n := len(s)
	for i := 0; i+1 < n; {
		// Anchors start with a word byte after a non-word byte (or the text's start):
		// jump from word start to word start.
		c := s[i]
		if idx.start[c] {
			if slot := idx.slot[uint16(c)<<8|uint16(s[i+1])]; slot != 0 {
				for _, j := range idx.lists[slot-1] {
					if strings.HasPrefix(s[i:], ps[j].anchor) && ps[j].plausible(s[i:]) {
						hits |= 1 << j
					}
				}
			}
		}
		for i < n && wordByte[s[i]] {
			i++
		}
		for i < n && !wordByte[s[i]] {
			i++
		}
	}
	return hits
}

// plausible is a cheap check of a candidate beyond its anchor, for an anchor that is a
// common word start ("pat" of path and pattern): Airtable's token has its dot at 17.
func (p *pattern) plausible(s string) bool {
	if p.anchor == "pat" {
		return len(s) > 17 && s[17] == '.'
	}
	return true
}

// redactMore replaces the shapes of morePatterns, .netrc password fields and .pgpass
// passwords.
func redactMore(s string) string {
	out := s
	if hits := moreHits(s); hits != 0 {
		ps := morePatterns()
		for i := range ps {
			if hits&(1<<i) != 0 {
				out = ps[i].replace(out)
			}
		}
	}
	if strings.Contains(out, "password") {
		out = redactNetrc(out)
	}
	if strings.Contains(out, ":") {
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
	if !hasPgpassShape(s) {
		return s
	}
	sp := splice{s: s}
	for _, m := range pgpassLine().FindAllStringSubmatchIndex(s, -1) {
		if strings.HasPrefix(s[m[2]:m[3]], markerPrefix) || m[2] < sp.last {
			continue
		}
		sp.replace(m[2], m[3], kindSecret)
	}
	return sp.String()
}

// hasPgpassShape is the cheap check before the line regexp: some ":PORT:" or ":*:".
func hasPgpassShape(s string) bool {
	for i := 0; ; {
		k := strings.IndexByte(s[i:], ':')
		if k < 0 {
			return false
		}
		p := i + k + 1
		i = p
		n := p
		for n < len(s) && n-p < 5 && '0' <= s[n] && s[n] <= '9' {
			n++
		}
		if n > p && n < len(s) && s[n] == ':' || p+1 < len(s) && s[p] == '*' && s[p+1] == ':' {
			return true
		}
	}
}

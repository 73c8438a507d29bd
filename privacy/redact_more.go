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

		// Shapes of gitleaks' and trufflehog's default rules that issue 26 left out.
		// VCS and CI.
		{"gitlab-token", `glffct-[A-Za-z0-9_\-]{20,}`, []string{"glffct-"}},
		{"circleci-token", `CCIPAT_[A-Za-z0-9]{22}_[a-fA-F0-9]{40}`, []string{"CCIPAT_"}},
		{"buildkite-token", `bkua_[a-z0-9]{40}`, []string{"bkua_"}},
		{"sourcegraph-token", `sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}`, []string{"sgp_"}},
		{"terraform-token", `atlasv1\.[A-Za-z0-9_\-=]{60,}`, []string{"atlasv1."}},
		{"slack-token", `xoxe(?:\.xox[bp])?-[0-9]-[A-Za-z0-9]{100,}`, []string{"xoxe-", "xoxe."}},
		// Package registries.
		{"rubygems-token", `rubygems_[a-f0-9]{48}`, []string{"rubygems_"}},
		{"clojars-token", `CLOJARS_[A-Za-z0-9]{60}`, []string{"CLOJARS_"}},
		{"artifactory-key", `AKCp[A-Za-z0-9]{60,}`, []string{"AKCp"}},
		{"dockerhub-token", `dckr_oat_[A-Za-z0-9_\-]{32,}`, []string{"dckr_oat_"}},
		// Cloud.
		{"alibaba-access-key-id", `LTAI[A-Za-z0-9]{20}`, []string{"LTAI"}},
		{"aws-bedrock-key", `ABSK[A-Za-z0-9+/]{100,}={0,2}`, []string{"ABSK"}},
		{"cloudflare-token", `cf[ua]t_[A-Za-z0-9]{40,}`, []string{"cfut_", "cfat_"}},
		{"cloudflare-origin-ca-key", `v1\.0-[a-f0-9]{24}-[a-f0-9]{100,}`, []string{"v1.0-"}},
		{"tailscale-key", `tskey-[a-z]+-[A-Za-z0-9_]{6,}-[A-Za-z0-9_]{10,}`, []string{"tskey-"}},
		{"netlify-token", `nfp_[A-Za-z0-9_]{36,}`, []string{"nfp_"}},
		{"supabase-token", `sb_secret_[A-Za-z0-9_\-]{20,}`, []string{"sb_secret_"}},
		{"dynatrace-token", `dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`, []string{"dt0c01."}},
		// AI providers.
		{"openrouter-key", `sk-or-v1-[a-f0-9]{64}`, []string{"sk-or-v1-"}},
		{"nvidia-key", `nvapi-[A-Za-z0-9_\-]{60,}`, []string{"nvapi-"}},
		{"langsmith-key", `lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}`, []string{"lsv2_"}},
		{"pinecone-key", `pcsk_[A-Za-z0-9]{5,6}_[A-Za-z0-9]{60,}`, []string{"pcsk_"}},
		{"tavily-key", `tvly-(?:dev-|prod-)?[A-Za-z0-9]{30,}`, []string{"tvly-"}},
		// Chat and webhooks.
		{"discord-webhook", `discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]{40,}`, []string{"discord.com/api/webhooks/", "discordapp.com/api/webhooks/"}},
		{"teams-webhook", `webhook\.office\.com/webhookb2/[A-Za-z0-9@/_\-]{40,}`, []string{"webhook.office.com/webhookb2/"}},
		// Payments.
		{"stripe-key", `[sr]k_prod_[A-Za-z0-9]{16,}`, []string{"sk_prod_", "rk_prod_"}},
		{"braintree-token", `access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}`, []string{"access_token$"}},
		{"shippo-token", `shippo_(?:live|test)_[a-fA-F0-9]{40}`, []string{"shippo_live_", "shippo_test_"}},
		{"flutterwave-key", `FLWSECK(?:_TEST)?-[A-Za-z0-9]{12,32}(?:-X)?`, []string{"FLWSECK-", "FLWSECK_TEST"}},
		{"duffel-token", `duffel_(?:live|test)_[A-Za-z0-9_\-=]{40,}`, []string{"duffel_live_", "duffel_test_"}},
		{"easypost-key", `EZ[AT]K[A-Za-z0-9]{54}`, []string{"EZAK", "EZTK"}},
		// Other SaaS a project's code and config carry.
		{"posthog-key", `phx_[A-Za-z0-9_]{40,}`, []string{"phx_"}},
		{"brevo-key", `xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}`, []string{"xkeysib-"}},
		{"mapbox-token", `sk\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{20,}`, []string{"sk.eyJ"}},
		{"grafana-token", `eyJrIjoi[A-Za-z0-9]{60,}={0,2}`, []string{"eyJrIjoi"}},
		{"1password-token", `ops_eyJ[A-Za-z0-9+/]{200,}={0,3}`, []string{"ops_eyJ"}},
		{"typeform-token", `tfp_[A-Za-z0-9_\-.=]{50,}`, []string{"tfp_"}},
		{"prefect-key", `pnu_[A-Za-z0-9]{36}`, []string{"pnu_"}},
		{"readme-key", `rdme_[a-z0-9]{60,}`, []string{"rdme_"}},
		{"infracost-token", `ico-[A-Za-z0-9]{32}`, []string{"ico-"}},
		{"octopus-key", `API-[A-Z0-9]{26}\b`, []string{"API-"}},
		{"facebook-token", `EAA[MC][A-Za-z0-9]{100,}`, []string{"EAAM", "EAAC"}},
		// A JWT in base64 ("eyJ" is "ZXlK"), as in a Kubernetes secret's data.
		{"jwt", `ZXlK[A-Za-z0-9+/]{40,}={0,2}`, []string{"ZXlK"}},
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
// before it ("ya29." at "9.", "shpat_" at "hp", "ATATT3" at "TA", "dapi" at "ap", "ABSK"
// at "SK").
const moreTriggers = "_-.=:AJKp"

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
		if len(idx.lists) == 255 {
			panic("privacy: more anchor pairs than a slot holds")
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

// redactMore replaces a Kubernetes Secret's data values, the shapes of moreShapes that
// scanHints found, .netrc password fields and .pgpass passwords.
func redactMore(s string, h hints) string {
	out := s
	if h.h&hintK8sSecret != 0 {
		out = redactK8sSecrets(out)
	}
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
	if h.h&hintAzureAD != 0 {
		out = redactAzureADSecrets(out)
	}
	return out
}

const kindAzureAD = "azure-ad-client-secret"

// azureADSecretAt reports whether an Entra ID (Azure AD) client secret starts at s[j]: three
// of [A-Za-z0-9_.~], a digit, "Q~" and 31 or more of [A-Za-z0-9_.~-], at a word start. Its
// only fixed part is the "Q~" at 4, so it has no anchor: scanHints looks at each '~'.
func azureADSecretAt(s string, j int) bool {
	if j < 0 || !wordStart(s, j) || j+6+31 > len(s) || s[j+4] != 'Q' || s[j+5] != '~' || s[j+3] < '0' || s[j+3] > '9' {
		return false
	}
	for _, c := range []byte(s[j : j+3]) {
		if !isAzureADByte(c) || c == '-' {
			return false
		}
	}
	for _, c := range []byte(s[j+6 : j+6+31]) {
		if !isAzureADByte(c) {
			return false
		}
	}
	return true
}

func isAzureADByte(c byte) bool { return wordByte[c] || c == '.' || c == '~' || c == '-' }

// redactAzureADSecrets replaces every Entra ID client secret (azureADSecretAt), to the end
// of its run of secret bytes.
func redactAzureADSecrets(s string) string {
	sp := splice{s: s}
	for i := 0; ; {
		k := strings.Index(s[i:], "Q~")
		if k < 0 {
			break
		}
		pos := i + k
		i = pos + 2
		if !azureADSecretAt(s, pos-4) || pos-4 < sp.last {
			continue
		}
		end := pos + 2
		for end < len(s) && isAzureADByte(s[end]) {
			end++
		}
		sp.replace(pos-4, end, kindAzureAD)
		i = end
	}
	return sp.String()
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

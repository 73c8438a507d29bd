package privacy

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/internal/secretsample"
)

// issue26Secrets are the secret shapes issue 26 found stored, and those of gitleaks' and
// trufflehog's rule lists a coding session plausibly shows: kind → a line holding one
// (fake) → the secret part that must be gone. cmd/memnode's e2e privacy test sends them
// all through every entry path.
func issue26Secrets() []struct{ kind, line, secret string } {
	low := func(n int) string { return strings.Repeat("fakex", n/5+1)[:n] }
	alnum := func(n int) string { return strings.Repeat("Fa4e0", n/5+1)[:n] }
	upper := func(n int) string { return strings.Repeat("FAKE0", n/5+1)[:n] }
	b64 := strings.Repeat("FaKe0+/", 13)[:86]
	sas := "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2027-01-01&sig=" + alnum(40) + "%3D"
	putty := "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: fake\nPublic-Lines: 2\nAAAAC3Nz" + alnum(30) +
		"\nPrivate-Lines: 1\nAAAAI" + alnum(40) + "\nPrivate-MAC: " + hexFake(64)
	return []struct{ kind, line, secret string }{
		{"azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=fake;AccountKey=" + b64 + "==;EndpointSuffix=core.windows.net", b64},
		{"azure-sas-token", "https://fake.blob.core.windows.net/c/f.txt?" + sas, "sig=" + alnum(40)},
		{"google-oauth-token", "Authorization header ya29." + alnum(60), "ya29." + alnum(60)},
		{"google-oauth-secret", `"client_secret_x": "GOCSPX-` + alnum(28) + `"`, "GOCSPX-" + alnum(28)},
		{"vault-token", "VAULT_TOKEN_X hvs." + alnum(90), "hvs." + alnum(90)},
		{"atlassian-token", "jira token ATATT3" + alnum(180), "ATATT3" + alnum(180)},
		{"shopify-token", "X-Shopify-Access-Token-x shpat_" + hexFake(32), "shpat_" + hexFake(32)},
		{"private-key", "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo" + alnum(80), "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo"},
		{"putty-private-key", putty, "Private-MAC: " + hexFake(64)},
		{"age-secret-key", "AGE-SECRET-KEY-1" + upper(58), "AGE-SECRET-KEY-1" + upper(58)},
		{"databricks-token", "host=x dapi" + hexFake(32), "dapi" + hexFake(32)},
		{"linear-api-key", "lin_api_" + alnum(40), "lin_api_" + alnum(40)},
		{"postman-key", "PMAK-" + hexFake(24) + "-" + hexFake(34), "PMAK-" + hexFake(24)},
		{"grafana-token", "glc_" + alnum(40) + " glsa_" + alnum(32) + "_" + hexFake(8), "glc_" + alnum(40)},
		{"gitlab-token", "runner glrt-" + alnum(24) + " deploy gldt-" + alnum(24), "glrt-" + alnum(24)},
		{"dockerhub-token", "docker login -u me --password-stdin <<< dckr_pat_" + alnum(27), "dckr_pat_" + alnum(27)},
		{"groq-key", "gsk_" + alnum(52), "gsk_" + alnum(52)},
		{"replicate-token", "r8_" + alnum(37), "r8_" + alnum(37)},
		{"xai-key", "xai-" + alnum(80), "xai-" + alnum(80)},
		{"perplexity-key", "pplx-" + alnum(48), "pplx-" + alnum(48)},
		{"supabase-token", "sbp_" + hexFake(40), "sbp_" + hexFake(40)},
		{"pulumi-token", "pul-" + hexFake(40), "pul-" + hexFake(40)},
		{"planetscale-token", "pscale_tkn_" + alnum(43), "pscale_tkn_" + alnum(43)},
		{"newrelic-key", "NRAK-" + upper(27), "NRAK-" + upper(27)},
		{"doppler-token", "dp.pt." + alnum(43), "dp.pt." + alnum(43)},
		{"heroku-key", "HRKU-" + alnum(36), "HRKU-" + alnum(36)},
		{"notion-token", "ntn_" + alnum(46), "ntn_" + alnum(46)},
		{"sentry-token", "sntrys_" + alnum(60), "sntrys_" + alnum(60)},
		{"square-token", "sq0atp-" + alnum(22), "sq0atp-" + alnum(22)},
		{"fly-token", "fo1_" + alnum(43), "fo1_" + alnum(43)},
		{"mailgun-key", "api:key-" + hexFake(32), "key-" + hexFake(32)},
		{"airtable-token", "pat" + alnum(14) + "." + hexFake(64), hexFake(64)},
		{"telegram-bot-token", "https://api.telegram.org/bot123456789:AA" + alnum(33) + "/getMe", "AA" + alnum(33)},
		{"secret", "machine api.example.com login me password " + low(20), low(20)},
		{"secret", "machine api.example.com\n  login me\n  password " + low(21), low(21)},
		{"secret", "db.example.com:5432:app:postgres:" + low(22), low(22)},
		{"secret", "*:*:*:admin:" + low(23), low(23)},
		{"secret", "ldapsearch -x -D cn=admin -w " + low(24) + " -b dc=x", low(24)},
		{"secret", "ssh-keygen -t ed25519 -N " + low(25) + " -f key", low(25)},
		{"secret", "ssh-keygen -p -P " + low(26) + " -N " + low(27) + " -f key", low(26)},
		{"secret", "unzip -P " + low(28) + " backup.zip", low(28)},
		{"secret", "redis-cli -h cache -a " + low(29) + " ping", low(29)},
		{"secret", "7z x -p" + low(30) + " a.7z", low(30)},
		{"secret", "openssl enc -aes-256-cbc -k " + low(31) + " -in a", low(31)},
		{"secret", "openssl rsa -in k.pem -passin pass:" + low(32), low(32)},
	}
}

func TestRedactIssue26Shapes(t *testing.T) {
	for _, c := range issue26Secrets() {
		out := Redact(c.line)
		if strings.Contains(out, c.secret) || !strings.Contains(out, "[REDACTED:"+c.kind+"]") {
			t.Errorf("%s: %q\n→ %q", c.kind, c.line, out)
		}
		if Redact(out) != out {
			t.Errorf("%s: not idempotent: %q", c.kind, out)
		}
	}
}

// TestRedactIssue26Lookalikes: words and code the new anchors resemble stay.
func TestRedactIssue26Lookalikes(t *testing.T) {
	for _, s := range []string{
		"see path/to/file and the pattern in patterns.go", "the robot's bot token is in $BOT_TOKEN",
		"key-value store; monkey-patch", "sig=abc", "dp.example.com", "hvs.length", "ya29.x",
		"the password field is required", "time 10:22:31 and 12:00:00:00:ff", "ssh-keygen -N '' -f key",
		"unzip -P $PW a.zip", "openssl rsa -passin env:PW", "openssl rsa -passin file:/run/pw",
		"secret_sauce := 1", "EAAA is a prefix", "machine learning: the password is in the vault",
		"zip -r out.zip dir", "ldapsearch -w $LDAP_PW",
	} {
		if out := Redact(s); out != s {
			t.Errorf("%q → %q", s, out)
		}
	}
}

// moreAtEveryWordStart looks for moreShapes' anchors the slow way, at every word start:
// the anchors found (candidates), and those whose token matches there (must be found).
func moreAtEveryWordStart(s string) (candidates, matches patternSet) {
	idx, ps := moreIdx(), morePatterns()
	for j := 0; j < len(s); j++ {
		if j > 0 && isWordByte(s[j-1]) {
			continue
		}
		for k, a := range idx.anchors {
			if strings.HasPrefix(s[j:], a) {
				candidates.add(k)
				if ps[k].re.MatchString(s[j:]) {
					matches.add(k)
				}
			}
		}
	}
	return candidates, matches
}

// checkScanFinds fails unless the one pass of scanHints finds every anchor whose token is
// in s, and no anchor that is not there.
func checkScanFinds(t interface{ Fatalf(string, ...any) }, s string) {
	got := scanHints(s).more
	candidates, matches := moreAtEveryWordStart(s)
	for i := range got {
		if matches[i]&^got[i] != 0 || got[i]&^candidates[i] != 0 {
			t.Fatalf("%q: scan %x, candidates %x, tokens %x", s, got, candidates, matches)
		}
	}
}

// TestMoreAnchorsAllFound: scanHints stops at few bytes, yet finds every anchor of
// moreShapes at a word start, each with a tail as its token would have it.
func TestMoreAnchorsAllFound(t *testing.T) {
	for i, a := range moreIdx().anchors {
		tail := "0123456789abcd.:x"
		if a == "bot" {
			tail = "123456789:AA"
		}
		for _, s := range []string{a + tail, "x " + a + tail, "(" + a + tail} {
			if !scanHints(s).more.has(i) {
				t.Errorf("anchor %q not found in %q", a, s)
			}
		}
		if scanHints("x" + a + "0123456789abcd.:x").more.has(i) {
			t.Errorf("anchor %q found inside a word", a)
		}
	}
	for _, c := range issue26Secrets() {
		checkScanFinds(t, c.line)
	}
}

// TestScanFindsWhatTheSlowWayFinds: on text made of anchors, word pieces and the trigger
// bytes, the one pass finds every token a search at every word start finds.
func TestScanFindsWhatTheSlowWayFinds(t *testing.T) {
	pieces := append([]string{"0123456789abcd", "abcdef0123", "123456789", "x", "AA", "_", "-", ".", ":", "=", " ", "\n", "A", "E", "J", "p", "da", "L", "/"},
		moreIdx().anchors...)
	for _, c := range issue26Secrets() {
		pieces = append(pieces, c.line, c.secret)
	}
	for _, c := range secretsample.All("rp") {
		pieces = append(pieces, c.Line, c.Secret)
	}
	rapid.Check(t, func(t *rapid.T) {
		checkScanFinds(t, strings.Join(rapid.SliceOf(rapid.SampledFrom(pieces)).Draw(t, "parts"), ""))
	})
}

func FuzzScanFindsWhatTheSlowWayFinds(f *testing.F) {
	for _, c := range issue26Secrets() {
		f.Add(c.line)
	}
	for _, c := range secretsample.All("fz") {
		f.Add(c.Line)
	}
	f.Fuzz(func(t *testing.T, s string) { checkScanFinds(t, s) })
}

// TestKeyAfterAToken: a key right after a token of moreShapes is a key once the token is a
// marker ("…]_token="), though too long to be one before; one Redact finds its value.
func TestKeyAfterAToken(t *testing.T) {
	tok := "xai-" + strings.Repeat("Fa4e0", 16)
	in := "export " + tok + "_token=" + fake(12)
	out := Redact(in)
	if want := "export [REDACTED:xai-key]_token=[REDACTED:secret]"; out != want {
		t.Errorf("%q\n→ %q, want %q", in, out, want)
	}
}

// TestCommandLineAfterALongToken: a -p password whose command is more than
// maxCommandLookback bytes before it, behind a long token, is found once the token is a
// marker, in the same Redact.
func TestCommandLineAfterALongToken(t *testing.T) {
	jwt := "eyJ" + strings.Repeat("Fa4e0", 50) + ".eyJ" + strings.Repeat("fake0", 20) + ".sig"
	in := "mysql --init-command=" + jwt + " -p" + fake(14) + " app"
	out := Redact(in)
	if want := "mysql --init-command=[REDACTED:jwt] -p[REDACTED:secret] app"; out != want {
		t.Errorf("%q\n→ %q, want %q", in, out, want)
	}
}

// TestRedactEverySampleKind: every kind and shape of internal/secretsample (one of each
// row of SECRETS.md) is redacted as its kind, once and for all.
func TestRedactEverySampleKind(t *testing.T) {
	for _, c := range secretsample.All("zq") {
		out := Redact(c.Line)
		if strings.Contains(out, c.Secret) || !strings.Contains(out, "[REDACTED:"+c.Kind+"]") {
			t.Errorf("%s: %q\n→ %q", c.Kind, c.Line, out)
		}
		if Redact(out) != out {
			t.Errorf("%s: not idempotent: %q", c.Kind, out)
		}
	}
	// All in one text, a line each, as the end-to-end tests plant them.
	var lines []string
	for _, c := range secretsample.All("zq") {
		lines = append(lines, c.Line)
	}
	out := Redact(strings.Join(lines, "\n"))
	for _, c := range secretsample.All("zq") {
		if strings.Contains(out, c.Secret) {
			t.Errorf("%s: kept in the joined text: %q", c.Kind, c.Secret)
		}
	}
}

// TestRedactRuleListLookalikes: words, paths and URLs the shapes of the gitleaks and
// trufflehog rules resemble stay.
func TestRedactRuleListLookalikes(t *testing.T) {
	for _, s := range []string{
		"API-GATEWAY-v2 and API-1234", "favicon ico-32x32.png", "release v1.0-beta.2", "see nvapi-docs",
		"the tskey-auth prefix", "EAAC is short", "aQ~b and x8Q~short", "redis://:6379/0 and http://:8080/",
		"ABSK is a prefix", "LTAI12", "sk.eyJ alone", "webhook.office.com/webhookb2/ and discord.com/api/webhooks/",
		"access_token$production$", "pnu_short", "ZXlK", "xoxe-1-short", "atlasv1.short", "sb_secret_x",
	} {
		if out := Redact(s); out != s {
			t.Errorf("%q → %q", s, out)
		}
	}
}

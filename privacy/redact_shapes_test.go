package privacy

import (
	"encoding/base64"
	"strings"
	"testing"
)

func hexFake(n int) string { return strings.Repeat("fa4e0", n/5+1)[:n] }

func TestRedactNewShapes(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	pemBody := "MIIEow" + fake(58) + "\n" + fake(64) + "\n" + fake(20) + "=="
	tests := []struct {
		name, in, want string
	}{
		{"npm", "//registry.npmjs.org/:_authToken npm_" + fake(36) + " x", "//registry.npmjs.org/:_authToken [REDACTED:npm-token] x"},
		{"huggingface", "HF hf_" + fake(34), "HF [REDACTED:huggingface-token]"},
		{"sendgrid", "key SG." + fake(22) + "." + fake(43) + " end", "key [REDACTED:sendgrid-key] end"},
		{"twilio", "twilio SK" + hexFake(32) + ".", "twilio [REDACTED:twilio-key]."},
		{"webhook secret", "whsec_" + fake(32), "[REDACTED:webhook-secret]"},
		{"digitalocean", "doctl auth init -t dop_v1_" + hexFake(64), "doctl auth init -t [REDACTED:digitalocean-token]"},
		{"digitalocean oauth", "doo_v1_" + hexFake(64), "[REDACTED:digitalocean-token]"},
		{"pypi", "pypi-AgEIcHlwaS5vcmc" + fake(60), "[REDACTED:pypi-token]"},
		{"password flag", "psql --password " + fake(10) + " db", "psql --password [REDACTED:secret] db"},
		{"password flag quoted", `tool --db-password "a b c" x`, `tool --db-password "[REDACTED:secret]" x`},
		{"token flag", "gh auth --with-token " + fake(12), "gh auth --with-token [REDACTED:secret]"},
		{"api key flag", "run --api-key " + fake(12) + " --v", "run --api-key [REDACTED:secret] --v"},
		{"mysql -p", "mysql -u root -p" + fake(10) + " app", "mysql -u root -p[REDACTED:secret] app"},
		{"mysqldump -p", "/usr/bin/mysqldump -h db -p" + fake(8) + " app > d.sql", "/usr/bin/mysqldump -h db -p[REDACTED:secret] app > d.sql"},
		{"curl -u", "curl -u admin:" + fake(10) + " https://x", "curl -u admin:[REDACTED:secret] https://x"},
		{"curl --user", "curl --user admin:" + fake(10) + " https://x", "curl --user admin:[REDACTED:secret] https://x"},
		{"sshpass -p", "sshpass -p " + fake(10) + " ssh host", "sshpass -p [REDACTED:secret] ssh host"},
		{"sshpass -p attached", "sshpass -p'" + fake(10) + "' ssh host", "sshpass -p'[REDACTED:secret]' ssh host"},
		{"htpasswd -b", "htpasswd -b .htpasswd alice " + fake(10), "htpasswd -b .htpasswd alice [REDACTED:secret]"},
		{"htpasswd -cb", "sudo htpasswd -cbB -C 10 /etc/h alice " + fake(10) + " && ok", "sudo htpasswd -cbB -C 10 /etc/h alice [REDACTED:secret] && ok"},
		{"htpasswd -nb", "htpasswd -nb alice '" + fake(10) + "'", "htpasswd -nb alice '[REDACTED:secret]'"},
		{"base64 password=", "echo " + b64("password="+fake(12)) + " | base64 -d", "echo [REDACTED:base64-secret] | base64 -d"},
		{"base64 password offset 1", b64("xpassword=" + fake(12)), "[REDACTED:base64-secret]"},
		{"base64 password offset 2", b64("xyPASSWORD=" + fake(12)), "[REDACTED:base64-secret]"},
		{"base64 secret", "data " + b64("client_secret="+fake(20)), "data [REDACTED:base64-secret]"},
		{"pem body", "key:\n" + pemBody + "\ndone", "key:\n[REDACTED:private-key]\ndone"},
		{"openssh body", "b3BlbnNzaC1rZXktdjEAAAAA" + fake(40) + "\n" + fake(64) + "\n" + fake(9) + "\nnext", "[REDACTED:private-key]\nnext"},
		{"lone pem end", "ab" + fake(64) + "\n-----END RSA PRIVATE KEY-----\nafter", "[REDACTED:private-key]\nafter"},
		{"lone pem end after redaction", "AKIA" + fake(16) + " x\n-----END PRIVATE KEY----- y", "[REDACTED:private-key] y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Redact(tt.in)
			if got != tt.want {
				t.Fatalf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if again := Redact(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestRedactNewShapesNegative(t *testing.T) {
	for _, in := range []string{
		"npm_config_cache=/tmp/npm",
		"hf_hub_download(repo_id)",
		"SG.example",
		"SKIP the SKU list",
		"mkdir -p /tmp/x && cp -p a b",
		"mysql -p app",
		"ssh -p 2222 host",
		"docker run -u 1000:1000 img",
		"git push -u origin main",
		"sort -u file",
		"--password $DB_PASSWORD",
		"--password-file /run/secrets/pw",
		"--token-file /tmp/tok",
		"--bypass all",
		"htpasswd -c .htpasswd alice",
		"MIIsomething short",
		"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		"-----END PUBLIC KEY-----",
		"pypi-simple index",
		"the password is in the vault",
	} {
		if got := Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want unchanged", in, got)
		}
	}
}

func TestBase64Anchors(t *testing.T) {
	// Every anchor is long enough to be specific and is found by scanHints.
	idx := base64Index()
	for c := range idx {
		for _, a := range idx[c] {
			if len(a.s) < 6 {
				t.Errorf("anchor %q is too short", a.s)
			}
			if scanHints(" "+a.s+" ").h&hintBase64 == 0 {
				t.Errorf("anchor %q not hinted", a.s)
			}
		}
	}
}

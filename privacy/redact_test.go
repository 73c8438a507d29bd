package privacy

import (
	"strings"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// fake builds an obviously fake secret body; tests assemble tokens at run time so that
// secret scanners do not flag this file.
func fake(n int) string { return strings.Repeat("FAKE0", n/5+1)[:n] }

func TestRedactPositive(t *testing.T) {
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIFAKE\n" + fake(40) + "\n-----END RSA PRIVATE KEY-----"
	tests := []struct {
		name, in, want string
	}{
		{"pem", "key:\n" + pem + "\ndone", "key:\n[REDACTED:private-key]\ndone"},
		{"pem openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----", "[REDACTED:private-key]"},
		{"pem pkcs8", "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY----- x", "[REDACTED:private-key] x"},
		{"pem pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQ\n-----END PGP PRIVATE KEY BLOCK-----", "[REDACTED:private-key]"},
		{"pem unterminated", "a -----BEGIN EC PRIVATE KEY-----\nMHc\nrest", "a [REDACTED:private-key]"},
		{"aws key id", "id AKIA" + fake(16) + " end", "id [REDACTED:aws-access-key-id] end"},
		{"aws sts key id", "ASIA" + fake(16), "[REDACTED:aws-access-key-id]"},
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=" + fake(40), "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key]"},
		{"aws secret ini", "aws_secret_access_key = " + fake(40), "aws_secret_access_key = [REDACTED:aws-secret-access-key]"},
		{"aws secret json", `{"SecretAccessKey": "` + fake(40) + `"}`, `{"SecretAccessKey": "[REDACTED:aws-secret-access-key]"}`},
		{"google", "key=AIza" + fake(35), "key=[REDACTED:google-api-key]"},
		{"github classic", "token ghp_" + fake(36) + ".", "token [REDACTED:github-token]."},
		{"github oauth", "gho_" + fake(36), "[REDACTED:github-token]"},
		{"github user", "ghu_" + fake(36), "[REDACTED:github-token]"},
		{"github server", "ghs_" + fake(36), "[REDACTED:github-token]"},
		{"github refresh", "ghr_" + fake(36), "[REDACTED:github-token]"},
		{"github fine-grained", "github_pat_11" + fake(20) + "_" + fake(40), "[REDACTED:github-token]"},
		{"gitlab", "glpat-" + fake(20), "[REDACTED:gitlab-token]"},
		{"slack bot", "xoxb-1234-5678-" + fake(24), "[REDACTED:slack-token]"},
		{"slack user", "xoxp-1-" + fake(20), "[REDACTED:slack-token]"},
		{"slack app", "xapp-1-A01-" + fake(20), "[REDACTED:slack-token]"},
		{"slack webhook", "post to https://hooks.slack.com/services/T000/B000/" + fake(24) + " now", "post to [REDACTED:slack-webhook] now"},
		{"stripe live", "sk_live_" + fake(24), "[REDACTED:stripe-key]"},
		{"stripe restricted", "rk_live_" + fake(24), "[REDACTED:stripe-key]"},
		{"anthropic", "sk-ant-api03-" + fake(40), "[REDACTED:anthropic-key]"},
		{"openai legacy", "sk-" + fake(48), "[REDACTED:openai-key]"},
		{"openai project", "sk-proj-" + fake(20) + "_" + fake(20), "[REDACTED:openai-key]"},
		{"jwt", "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsig_-x", "t=[REDACTED:jwt]"},
		{"jwt unsigned", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJGQUtFIn0. x", "[REDACTED:jwt] x"},
		{"jwt after failed run", "eyJabcd-eyJabcd eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKE", "eyJabcd-eyJabcd [REDACTED:jwt]"},
		{"authorization bearer", "Authorization: Bearer abc.def-123", "Authorization: Bearer [REDACTED:authorization]"},
		{"authorization basic", "authorization: Basic dXNlcjpGQUtF\nnext", "authorization: Basic [REDACTED:authorization]\nnext"},
		{"authorization token", "Authorization: token FAKE123", "Authorization: token [REDACTED:authorization]"},
		{"authorization no scheme", "Authorization: FAKE123", "Authorization: [REDACTED:authorization]"},
		{"authorization curl", `curl -H 'Authorization: Bearer FAKE123' https://x`, `curl -H 'Authorization: Bearer [REDACTED:authorization]' https://x`},
		{"authorization curl double", `curl -H "Authorization: Bearer FAKE123" x`, `curl -H "Authorization: Bearer [REDACTED:authorization]" x`},
		{"authorization json", `{"Authorization":"Bearer FAKE123"}`, `{"Authorization":"Bearer [REDACTED:authorization]"}`},
		{"proxy authorization", "Proxy-Authorization: Basic FAKE", "Proxy-Authorization: Basic [REDACTED:authorization]"},
		{"url credentials", "postgres://admin:FAKEpass@db:5432/app", "postgres://[REDACTED:url-credentials]@db:5432/app"},
		{"url credentials https", "git clone https://user:FAKE@github.com/x", "git clone https://[REDACTED:url-credentials]@github.com/x"},
		{"dsn env", "DATABASE_DSN=postgres://u:FAKE@h/db", "DATABASE_DSN=[REDACTED:secret]"},
		{"env password", "DB_PASSWORD=FAKEhunter2", "DB_PASSWORD=[REDACTED:secret]"},
		{"env export", "export API_TOKEN=FAKE123", "export API_TOKEN=[REDACTED:secret]"},
		{"env quoted", `SECRET_KEY="FAKE value with spaces"`, `SECRET_KEY="[REDACTED:secret]"`},
		{"env single quoted", `PASSWD='FAKE'`, `PASSWD='[REDACTED:secret]'`},
		{"env multi line", "A=1\nAPI_KEY=FAKE\nB=2", "A=1\nAPI_KEY=[REDACTED:secret]\nB=2"},
		{"env apikey", "OPENAI_APIKEY=FAKE", "OPENAI_APIKEY=[REDACTED:secret]"},
		{"env access key", "ACCESS_KEY=FAKE", "ACCESS_KEY=[REDACTED:secret]"},
		{"env private key", "PRIVATE_KEY=FAKE", "PRIVATE_KEY=[REDACTED:secret]"},
		{"env credential", "GOOGLE_CREDENTIALS=FAKE", "GOOGLE_CREDENTIALS=[REDACTED:secret]"},
		{"env auth", "NPM_AUTH=FAKE", "NPM_AUTH=[REDACTED:secret]"},
		{"npmrc auth", "//registry.npmjs.org/:_authToken=FAKE", "//registry.npmjs.org/:_authToken=[REDACTED:secret]"},
		{"env db pass", "DB_PASS=FAKE", "DB_PASS=[REDACTED:secret]"},
		{"yaml pass", "db:\n  pass: FAKE hunter\n  user: bob", "db:\n  pass: [REDACTED:secret]\n  user: bob"},
		{"pass at line start", "pass: FAKEhunter2", "pass: [REDACTED:secret]"},
		{"pass key spaced", "Pass : FAKEhunter2", "Pass : [REDACTED:secret]"},
		{"yaml private key", "private-key: see vault", "private-key: [REDACTED:secret]"},
		{"yaml", "db:\n  password: FAKE hunter 2\n  user: bob", "db:\n  password: [REDACTED:secret]\n  user: bob"},
		{"yaml quoted", "client_secret: 'FAKE'", "client_secret: '[REDACTED:secret]'"},
		{"json", `{"user":"bob","password":"FAKE","n":1}`, `{"user":"bob","password":"[REDACTED:secret]","n":1}`},
		{"json camel", `{"accessToken": "FAKE\"x"}`, `{"accessToken": "[REDACTED:secret]"}`},
		{"python dict", `{'api_key': 'FAKE'}`, `{'api_key': '[REDACTED:secret]'}`},
		{"cli flag", "mysql --password=FAKE -u root", "mysql --password=[REDACTED:secret] -u root"},
		{"query param", "GET /cb?code=1&access_token=FAKE&x=2", "GET /cb?code=1&access_token=[REDACTED:secret]&x=2"},
		{"inline env before command", "GITHUB_TOKEN=FAKE go test", "GITHUB_TOKEN=[REDACTED:secret] go test"},
		{"cookie header", "Cookie: session=FAKE", "Cookie: [REDACTED:secret]"},
		{"two on a line", "user=bob password=FAKE token=FAKE2", "user=bob password=[REDACTED:secret] token=[REDACTED:secret]"},
		{"specific kind inside assignment", "GITHUB_TOKEN=ghp_" + fake(36), "GITHUB_TOKEN=[REDACTED:github-token]"},
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
			for _, secret := range []string{"FAKE", "hunter"} {
				if strings.Contains(got, secret) {
					t.Fatalf("secret %q survived in %q", secret, got)
				}
			}
		})
	}
}

func TestRedactNegative(t *testing.T) {
	for _, in := range []string{
		"token := bearer(r)",
		"\t\ttok := bearer(r)\n\t\tclaims, err := parse(tok)",
		"if errors.Is(err, jwt.ErrTokenExpired) {\n\treturn unauthorized(w, \"token expired\")\n}",
		`{"error":"token expired"}`,
		"// Middleware checks the bearer token.",
		"The login endpoint returns 500 when the JWT has expired.",
		"if token == \"\" { return }",
		"if token != nil {",
		"token = bearer(r)",
		"password = cfg.Password",
		"Token: tok,",
		"Password: cfg.Password,",
		"token: string;",
		"apiKey: string",
		"secret?: string",
		"max_tokens: 1024",
		"MAX_TOKENS=4096",
		"tokens = tokenize(text)",
		`"author": "Jane Doe"`,
		"AUTHOR=jane",
		"compassion: high",
		"passenger=3",
		"bypass: true",
		"PASSWORD=",
		"password: ${DB_PASSWORD}",
		`API_KEY="$API_KEY"`,
		"token: {{ .Token }}",
		"secrets:\n  inherit",
		"Authorization: Bearer $TOKEN",
		"Authorization: Bearer",
		"std::token::Kind",
		"http://localhost:8080/login?x=1",
		"ssh://git@github.com/org/repo",
		"mail me at dev@example.com: thanks",
		"sk-learn-compatible estimator",
		"task-runner ghp_short",
		"AKIAshort",
		"the -----BEGIN PUBLIC KEY----- block",
		"eyJ alone",
		"eyJab.eyJabcd.x",
		"xeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ9.sig",
		"PWD=/home/dev",
		"session_id: 5f0c9a3e-1b2d",
		"hook_event_name: PostToolUse",
		"a = b; c := d; e == f",
		"[REDACTED:secret]",
		"PASSWORD=[REDACTED:secret]",
		"password=Authorization=password(", // found by TestRedactProperties: idempotence
		// "pass" the verb, not a key: the offline compressor's own test-run titles
		"Tests pass: go test ./pkg/fixture/... -run Test1",
		"all 12 checks pass: ok, ran in 3s",
	} {
		if got := Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want unchanged", in, got)
		}
	}
}

func TestRedactReturnsInputWhenNothingToDo(t *testing.T) {
	in := strings.Repeat("func f(a, b int) int { return a + b } // plain code\n", 200)
	if got := Redact(in); unsafe.StringData(got) != unsafe.StringData(in) {
		t.Fatal("Redact copied text without secrets")
	}
	if n := testing.AllocsPerRun(100, func() { Redact(in) }); n != 0 {
		t.Errorf("Redact allocated %v times on text without secrets", n)
	}
	// Keys that look like secrets but whose values are rejected must not allocate either.
	keys := strings.Repeat("max_tokens: 1024\nauthor: Jane\nTokenExpiresIn: true\ntoken := bearer(r)\n", 100)
	if got := Redact(keys); got != keys {
		t.Fatalf("Redact changed %q", got[:80])
	}
	if n := testing.AllocsPerRun(100, func() { Redact(keys) }); n != 0 {
		t.Errorf("Redact allocated %v times on rejected assignments", n)
	}
}

func TestClean(t *testing.T) {
	in := "deploy with <private>my notes</private>DB_PASSWORD=FAKE and <system-reminder>r</system-reminder>done"
	want := "deploy with DB_PASSWORD=[REDACTED:secret] and done"
	if got := Clean(in); got != want {
		t.Fatalf("Clean = %q, want %q", got, want)
	}
}

func TestRedactPEMVariants(t *testing.T) {
	body := "MIIE" + fake(60)
	tests := []struct{ in, want string }{
		{"a\n-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----\nb", "a\n[REDACTED:private-key]\nb"},
		{"-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END CERTIFICATE-----\n" + body + "\n-----END PRIVATE KEY-----z", "[REDACTED:private-key]z"},
		{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"x -----BEGIN PRIVATE KEY----- " + body, "x [REDACTED:private-key]"},
		{"-----BEGIN EC PRIVATE KEY-----a-----END EC PRIVATE KEY----- -----BEGIN EC PRIVATE KEY-----b-----END EC PRIVATE KEY-----", "[REDACTED:private-key] [REDACTED:private-key]"},
		{"-----BEGIN-----BEGIN PRIVATE KEY-----x-----END PRIVATE KEY-----", "-----BEGIN[REDACTED:private-key]"},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%.40q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRedactProperties(t *testing.T) {
	pieces := []string{"password", "TOKEN", "api_key", "Authorization", "author", "export ", "=", ":", " ",
		"\t", "\n", `"`, "'", "`", "Bearer ", " ghp_" + fake(36) + " ", " AKIA" + fake(16) + " ", "[REDACTED:secret]",
		"(", ")", ",", ";", "&", "?", "://", "u:p@", "$", "{", "[", "]", "value", "123", ".", "-", "_",
		"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "eyJhbGciOi.eyJzdWIiOi.sig",
		" sk-ant-" + fake(24) + " ", "<private>", "</private>", "\\", "xoxb-" + fake(12)}
	rapid.Check(t, func(t *rapid.T) {
		in := strings.Join(rapid.SliceOf(rapid.SampledFrom(pieces)).Draw(t, "parts"), "")
		out := Redact(in)
		if again := Redact(out); again != out {
			t.Fatalf("Redact not idempotent:\n in %q\nout %q\nout2 %q", in, out, again)
		}
		if c := Clean(in); Clean(c) != c {
			t.Fatalf("Clean not idempotent:\n in %q\nout %q\nout2 %q", in, c, Clean(c))
		}
		// Tokens are space-delimited pieces, so each has a word boundary on both sides.
		for _, secret := range []string{"ghp_" + fake(36), "AKIA" + fake(16), "sk-ant-" + fake(24)} {
			if strings.Contains(out, secret) {
				t.Fatalf("token survived: %q -> %q", in, out)
			}
		}
	})
}

package privacy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memnode/memnode/internal/secretsample"
)

func FuzzStripTags(f *testing.F) {
	for _, s := range []string{
		"a <private>b</private> c", "<private>a<private>b</private>c</private>", "<PRIVATE id=1>x",
		"<pri<private>x</private>vate>y</private>z", "</system-reminder>", "<private/>",
		"x<system-reminder>a<private>b</system-reminder>c</private>y", "<memnode-context\n>",
		"a</private>b", "x<private>a</system-reminder>b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := StripTags(s)
		if again := StripTags(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if hasMemoryTag(out) || hasOpeningTagNaive(out) {
			t.Fatalf("memory tag survived: %q -> %q", s, out)
		}
		if len(out) > len(s) {
			t.Fatalf("output grew: %q -> %q", s, out)
		}
		if !strings.Contains(s, "<") && out != s {
			t.Fatalf("changed text without '<': %q", s)
		}
	})
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		"DB_PASSWORD=hunter2", "token := bearer(r)", "Authorization: Bearer abc", `{"password":"x"}`,
		"postgres://u:p@h/db", "DSN=postgres://u:p@h/db", "ghp_" + fake(36), "AKIA" + fake(16),
		"-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----", "x=eyJabcdef.eyJabcdef.sig",
		"export API_TOKEN='a b' && run", "?access_token=x&y=1", "sk-ant-" + fake(30),
		"npm_" + fake(36), "hf_" + fake(34), "SG." + fake(22) + "." + fake(43), "SK" + hexFake(32),
		"whsec_" + fake(32), "dop_v1_" + hexFake(64), "pypi-AgEIcHlwaS5vcmc" + fake(60),
		"psql --password x db", "mysql -uroot -pFAKE app", "curl -u u:p x", "sshpass -p x ssh h",
		"htpasswd -b f user PASS", "htpasswd -nbB -C 5 u 'p w'", "cGFzc3dvcmQ9aHVudGVy",
		"MIIEow" + fake(58) + "\n" + fake(64) + "\n" + fake(9) + "=", "x\n-----END RSA PRIVATE KEY-----\ny",
	} {
		f.Add(s)
	}
	for _, c := range secretsample.All("fz") {
		f.Add(c.Line)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Redact(s)
		if again := Redact(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("broke UTF-8: %q -> %q", s, out)
		}
		if c := Clean(s); Clean(c) != c {
			t.Fatalf("Clean not idempotent: %q -> %q -> %q", s, c, Clean(c))
		}
	})
}

func FuzzCleanJSON(f *testing.F) {
	for _, s := range []string{
		`{"prompt":"fix <private>SECRET-x</private>"}`, `[1,-2.5e3,true,null,"\u003cprivate>x"]`,
		`{"a<private>":1}`, `"\ud83d\ude00"`, "\"\xff\"", `{"env":"TOKEN=abc"}`, "", "  ", "{", `{"a":1,"a":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := CleanJSON(in)
		if len(bytes.Trim(in, " \t\r\n")) == 0 {
			if err != nil || string(out) != "null" {
				t.Fatalf("empty input: %q, %v", out, err)
			}
			return
		}
		if valid := json.Valid(in); valid != (err == nil) {
			t.Fatalf("json.Valid=%v but err=%v for %q", valid, err, in)
		}
		if err != nil {
			return
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("invalid output %q for %q", out, in)
		}
		again, err := CleanJSON(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
		checkAgainstReference(t, in, out)
	})
}

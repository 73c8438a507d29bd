package privacy

import (
	"encoding/base64"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestRedactK8sSecret(t *testing.T) {
	user, pass := base64.StdEncoding.EncodeToString([]byte("admin")), base64.StdEncoding.EncodeToString([]byte("p4ss-"+fake(8)))
	for _, c := range []struct{ name, in, want string }{
		{"yaml", "apiVersion: v1\ndata:\n  username: " + user + "\n  password: " + pass + "\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\n",
			"apiVersion: v1\ndata:\n  username: [REDACTED:kubernetes-secret]\n  password: [REDACTED:kubernetes-secret]\nkind: Secret\nmetadata:\n  name: db\ntype: Opaque\n"},
		{"manifest stringData, quoted, block scalar", "kind: \"Secret\"\nstringData:\n  api-url: \"https://x\"\n  config.json: |\n    {\"token\": 1}\n    more\n  other: 'q'\nmetadata:\n  name: x\n",
			"kind: \"Secret\"\nstringData:\n  api-url: \"[REDACTED:kubernetes-secret]\"\n  config.json: |\n    [REDACTED:kubernetes-secret]\n  other: '[REDACTED:kubernetes-secret]'\nmetadata:\n  name: x\n"},
		{"kubectl list", "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    tls.crt: " + pass + "\n    tls.key: " + user + "\n  kind: Secret\n  metadata:\n    name: tls\nkind: List\n",
			"apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    tls.crt: [REDACTED:kubernetes-secret]\n    tls.key: [REDACTED:kubernetes-secret]\n  kind: Secret\n  metadata:\n    name: tls\nkind: List\n"},
		{"json", "{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \"password\": \"" + pass + "\",\n        \"user\": \"" + user + "\"\n    },\n    \"kind\": \"Secret\"\n}",
			"{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \"password\": \"[REDACTED:kubernetes-secret]\",\n        \"user\": \"[REDACTED:kubernetes-secret]\"\n    },\n    \"kind\": \"Secret\"\n}"},
		{"only the Secret's document", "kind: ConfigMap\ndata:\n  mode: fast\n---\nkind: Secret\ndata:\n  key: " + pass + "\n",
			"kind: ConfigMap\ndata:\n  mode: fast\n---\nkind: Secret\ndata:\n  key: [REDACTED:kubernetes-secret]\n"},
		{"a ConfigMap alone", "kind: ConfigMap\ndata:\n  mode: fast\n", "kind: ConfigMap\ndata:\n  mode: fast\n"},
		{"prose", "the kind: Secretary of state; data: none", "the kind: Secretary of state; data: none"},
	} {
		out := Redact(c.in)
		if out != c.want {
			t.Errorf("%s:\n%s\n→\n%s\nwant\n%s", c.name, c.in, out, c.want)
		}
		if Redact(out) != out {
			t.Errorf("%s: not idempotent: %q", c.name, out)
		}
	}
}

// TestK8sSecretValuesNeverSurvive: generated Secret manifests (YAML and JSON, data and
// stringData, keys of any name, values base64 or quoted) keep none of their values.
func TestK8sSecretValuesNeverSurvive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(t, "n")
		block := rapid.SampledFrom([]string{"data", "stringData"}).Draw(t, "block")
		var yaml, json strings.Builder
		var values []string
		yaml.WriteString("apiVersion: v1\n" + block + ":\n")
		json.WriteString(`{"kind": "Secret", "` + block + `": {`)
		for i := range n {
			key := rapid.StringMatching(`[a-z][a-z0-9._-]{0,12}`).Draw(t, "key")
			v := "V" + rapid.StringMatching(`[A-Za-z0-9+/]{6,40}`).Draw(t, "value") + string(rune('a'+i))
			values = append(values, v)
			q := rapid.SampledFrom([]string{"", `"`, "'"}).Draw(t, "quote")
			yaml.WriteString("  " + key + ": " + q + v + q + "\n")
			if i > 0 {
				json.WriteString(", ")
			}
			json.WriteString(`"` + key + `": "` + v + `"`)
		}
		yaml.WriteString(rapid.SampledFrom([]string{"kind: Secret\n", "kind: 'Secret'\n", "type: Opaque\nkind: \"Secret\"\n"}).Draw(t, "kind"))
		json.WriteString("}}")
		for _, doc := range []string{yaml.String(), json.String()} {
			out := Redact(doc)
			for _, v := range values {
				if strings.Contains(out, v) {
					t.Fatalf("%q survives:\n%s\n→\n%s", v, doc, out)
				}
			}
			if Redact(out) != out {
				t.Fatalf("not idempotent:\n%s", out)
			}
		}
	})
}

func FuzzK8sSecret(f *testing.F) {
	for _, s := range []string{
		"kind: Secret\ndata:\n  a: YQ==\n", "kind: Secret\nstringData:\n  c: |\n    x\n  d: >\n    y\n",
		`{"kind":"Secret","data":{"a":"YQ==","b":"Yg=="}}`, "- kind: Secret\n  data:\n    k: v\n---\nkind: Secret\ndata:\n",
		"kind: Secret\ndata:\n  a: \"\n", `{"kind": "Secret", "data": {"a": "\"x\\", "b`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Redact(s)
		if again := Redact(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if !strings.Contains(s, "Secret") && out != redactK8sSecrets(out) {
			t.Fatalf("redacted data without a Secret: %q", s)
		}
	})
}

package privacy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func TestCleanJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "null"},
		{"white space only", " \n\t", "null"},
		{"null", "null", "null"},
		{"scalars", ` [true , false,null, 0, -1.5e+10, 12345678901234567890123 ] `, `[true,false,null,0,-1.5e+10,12345678901234567890123]`},
		{"string kept byte for byte", `"a\u0041\n\/é"`, `"a\u0041\n\/é"`},
		{"private in value", `{"prompt":"fix it <private>SECRET-x</private>"}`, `{"prompt":"fix it "}`},
		{"private in key", `{"a<private>k</private>":1}`, `{"a":1}`},
		{"escaped tag", `{"p":"x\u003cprivate\u003eSECRET-y\u003c/private\u003ez"}`, `{"p":"xz"}`},
		{"nested", `{"a":[{"b":{"c":["<system-reminder>r</system-reminder>ok"]}}]}`, `{"a":[{"b":{"c":["ok"]}}]}`},
		{"tag split by escape", `"<private>a\nb</private>c"`, `"c"`},
		{"secret", `{"env":"DB_PASSWORD=hunter2"}`, `{"env":"DB_PASSWORD=[REDACTED:secret]"}`},
		{"html not escaped on rewrite", `{"s":"<b>&</b> <private>x</private>"}`, `{"s":"<b>&</b> "}`},
		{"rewrite escapes", "{\"s\":\"q\\\" \\\\ \\t \\u0001 \\u2028 <private>x</private>\"}", "{\"s\":\"q\\\" \\\\ \\t \\u0001 \\u2028 \"}"},
		{"invalid utf-8 replaced", "\"a\xffb\"", "\"a\uFFFDb\""},
		{"surrogate pair", `"\ud83d\ude00<private>x</private>"`, `"😀"`},
		{"lone surrogate", `"\ud83dx<private>x</private>"`, "\"\uFFFDx\""},
		{"duplicate keys kept", `{"a":1,"a":2}`, `{"a":1,"a":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CleanJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("CleanJSON(%q): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Fatalf("CleanJSON(%q)\n got %s\nwant %s", tt.in, got, tt.want)
			}
			if !json.Valid(got) {
				t.Fatalf("output is not valid JSON: %s", got)
			}
		})
	}
}

func TestCleanJSONInvalid(t *testing.T) {
	for _, in := range []string{
		"{", "[1,]", `{"a"}`, `{"a":}`, `{a:1}`, "[1 2]", "01", "1.", "-", "1e", ".5", "+1",
		"tru", "nul", "falsey", `"abc`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\tb\"", "1 2", "{}x",
		`{"a":1,}`, "[", "]", "\x00", strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		out, err := CleanJSON([]byte(in))
		if !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("CleanJSON(%.20q) = %q, %v; want ErrInvalidJSON", in, out, err)
		}
		if json.Valid([]byte(in)) {
			t.Errorf("test input %.20q is valid JSON", in)
		}
	}
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if _, err := CleanJSON([]byte(deep)); err != nil {
		t.Errorf("depth 10000 rejected: %v", err)
	}
}

// TestCleanJSONFixture cleans every hook payload of the recorded session.
func TestCleanJSONFixture(t *testing.T) {
	var all strings.Builder
	for _, file := range []string{"session.jsonl", "transcript.jsonl"} {
		f, err := os.Open("../testdata/fixtures/claude-code/" + file)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			line := sc.Bytes()
			var rec struct {
				Payload json.RawMessage `json:"payload"`
			}
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatalf("%s:%d: %v", file, n+1, err)
			}
			for _, raw := range [][]byte{rec.Payload, line} {
				if len(raw) == 0 {
					continue
				}
				out, err := CleanJSON(raw)
				if err != nil {
					t.Fatalf("%s:%d: %v", file, n+1, err)
				}
				if bytes.Contains(out, []byte("SECRET-")) {
					t.Errorf("%s:%d: secret survived: %s", file, n+1, out)
				}
				if !json.Valid(out) {
					t.Errorf("%s:%d: invalid output %s", file, n+1, out)
				}
				checkAgainstReference(t, raw, out)
			}
			// Decode so that assertions below see the text, not its escapes.
			out, _ := CleanJSON(rec.Payload)
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			collectStrings(v, &all)
			n++
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("%s: no lines", file)
		}
	}
	text := all.String()
	for _, want := range []string{
		"go test ./internal/auth/...",
		"token expired",
		"The login endpoint returns 500 when the JWT has expired. Find out why and fix it. ",
		"claims, err := parse(tok)",
		"errors.Is(err, jwt.ErrTokenExpired)",
		"tok := bearer(r)",
		"// Middleware checks the bearer token.",
		"curl -s -H 'Authorization: Bearer ' localhost:8080/login",
		"<task-notification><task-id>t1</task-id>",
		"5f0c9a3e-1b2d-4c7e-9f10-aa11bb22cc33",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("cleaned fixture lost %q", want)
		}
	}
	for _, gone := range []string{"SECRET-", "<private>", "hunter2"} {
		if strings.Contains(text, gone) {
			t.Errorf("cleaned fixture still has %q", gone)
		}
	}
}

func collectStrings(v any, b *strings.Builder) {
	switch v := v.(type) {
	case string:
		b.WriteString(v)
		b.WriteByte('\n')
	case []any:
		for _, e := range v {
			collectStrings(e, b)
		}
	case map[string]any:
		for k, e := range v {
			b.WriteString(k)
			b.WriteByte('\n')
			collectStrings(e, b)
		}
	}
}

// checkAgainstReference compares CleanJSON's output with the obvious implementation:
// encoding/json decode, Clean every string and key, encode.
func checkAgainstReference(tb testing.TB, raw, out []byte) {
	tb.Helper()
	ref, ok := referenceClean(tb, raw)
	if !ok {
		return // cleaning made two keys equal: the maps cannot be compared
	}
	got := canonical(tb, out)
	if got != ref {
		tb.Fatalf("CleanJSON(%q)\n      = %s\nreference %s", raw, got, ref)
	}
}

func referenceClean(tb testing.TB, raw []byte) (string, bool) {
	tb.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		tb.Fatalf("reference decode %q: %v", raw, err)
	}
	ok := true
	var clean func(v any) any
	clean = func(v any) any {
		switch v := v.(type) {
		case string:
			return Clean(v)
		case []any:
			for i := range v {
				v[i] = clean(v[i])
			}
			return v
		case map[string]any:
			m := make(map[string]any, len(v))
			for k, e := range v {
				ck := Clean(k)
				if _, dup := m[ck]; dup {
					ok = false
				}
				m[ck] = clean(e)
			}
			return m
		}
		return v
	}
	return encodeCanonical(tb, clean(v)), ok
}

func canonical(tb testing.TB, b []byte) string {
	tb.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		tb.Fatalf("decode %q: %v", b, err)
	}
	return encodeCanonical(tb, v)
}

func encodeCanonical(tb testing.TB, v any) string {
	tb.Helper()
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

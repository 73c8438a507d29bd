package privacy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCleanJSONParts(t *testing.T) {
	tests := []struct {
		name                string
		input, response     string
		wantInput, wantResp string
	}{
		{"opened in input, closed in response",
			`{"command":"echo <private>MARK-1","description":"MARK-2"}`, `{"stdout":"MARK-3</private> done"}`,
			`{"command":"echo ","description":""}`, `{"stdout":" done"}`},
		{"stray close in response empties the input",
			`{"command":"cat notes"}`, `{"stdout":"MARK</private> tail"}`,
			`{"command":""}`, `{"stdout":" tail"}`},
		{"pem split across old_string and new_string",
			`{"file_path":"k.pem","old_string":"-----BEGIN RSA PRIVATE KEY-----\nMIIE` + fake(30) + `","new_string":"` + fake(30) + `\n-----END RSA PRIVATE KEY-----"}`, `{"ok":true}`,
			`{"file_path":"k.pem","old_string":"[REDACTED:private-key]","new_string":"[REDACTED:private-key]"}`, `{"ok":true}`},
		{"keys keep their shape", `{"<private>k</private>":"v","a":"<private>"}`, `{"b":"x</private>y"}`,
			`{"":"v","a":""}`, `{"b":"y"}`},
		{"untouched", `{"a":[1,"b",null]}`, `"c"`, `{"a":[1,"b",null]}`, `"c"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CleanJSONParts([]byte(tt.input), []byte(tt.response))
			if err != nil {
				t.Fatal(err)
			}
			if string(got[0]) != tt.wantInput || string(got[1]) != tt.wantResp {
				t.Fatalf("CleanJSONParts =\n %s\n %s\nwant\n %s\n %s", got[0], got[1], tt.wantInput, tt.wantResp)
			}
			for _, g := range got {
				if !json.Valid(g) {
					t.Fatalf("invalid JSON %s", g)
				}
			}
		})
	}
	if _, err := CleanJSONParts([]byte(`{"a":1}`), []byte(`{`)); err == nil {
		t.Fatal("CleanJSONParts accepted invalid JSON")
	}
}

// FuzzCleanParts plants a marker inside a <private> block of a text, cuts the text into
// parts anywhere (inside tags too) and cleans the parts as the parts of one record: when
// cleaning the whole text hides the marker, no cleaned part may hold it.
func FuzzCleanParts(f *testing.F) {
	for _, s := range [][3]string{
		{"a ", " b", "\x05\x0a"}, {"<private>", "</private>", "\x00\x10\x20"}, {"x</private>", "<private", "\x03"},
		{"<system-reminder>", "", "\x01\x02\x03\x04"}, {"", "", ""}, {"<pri", "vate>", "\x02\x09"},
		{"0000", ">00", "\x0b\x0b\x00"},
	} {
		f.Add(s[0], s[1], []byte(s[2]))
	}
	const marker = "MARKER-7f3a"
	f.Fuzz(func(t *testing.T, prefix, suffix string, cuts []byte) {
		if strings.Contains(prefix+suffix, "MARKER") {
			t.Skip("the marker must come from the private block only")
		}
		text := prefix + "<private>" + marker + "</private>" + suffix
		parts := cutAt(text, cuts)
		if strings.Contains(Clean(strings.Join(parts, "\n")), marker) {
			return // cutting a tag apart made the marker public in the joined text as well
		}
		js := make([][]byte, len(parts))
		for i, p := range parts {
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			js[i] = b
		}
		cj, err := CleanJSONParts(js...)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range cj {
			var s string
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatalf("invalid JSON %s: %v", b, err)
			}
			if strings.Contains(s, marker) {
				t.Fatalf("marker survived: parts %q -> %s", parts, b)
			}
		}
	})
}

// cutAt splits s at the byte offsets cuts (taken modulo len(s)+1), in order.
func cutAt(s string, cuts []byte) []string {
	var parts []string
	last := 0
	for i, c := range cuts {
		if i == 8 {
			break
		}
		p := last + int(c)%(len(s)-last+1)
		parts = append(parts, s[last:p])
		last = p
	}
	return append(parts, s[last:])
}

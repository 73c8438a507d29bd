package codewords_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memnode/memnode/internal/codewords"
)

func TestSplit(t *testing.T) {
	cases := map[string][]string{
		"OnLoad":                 {"On", "Load"},
		"OnUnload":               {"On", "Unload"},
		"ErrTokenExpired":        {"Err", "Token", "Expired"},
		"parseJSONBody":          {"parse", "JSON", "Body"},
		"HTTPServer":             {"HTTP", "Server"},
		"http2":                  {"http", "2"},
		"RS256":                  {"RS", "256"},
		"v2beta1":                {"v", "2", "beta", "1"},
		"getURL":                 {"get", "URL"},
		"parse":                  nil, // one part: nothing to add
		"JSON":                   nil,
		"2024":                   nil,
		"x":                      nil,
		"":                       nil,
		strings.Repeat("aB", 40): nil, // too long to be a name
	}
	for in, want := range cases {
		if got := codewords.Split(in); !slices.Equal(got, want) {
			t.Errorf("Split(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParts(t *testing.T) {
	cases := map[string]string{
		"Call OnLoad and OnUnload; OnLoad again":                               "On Load On Unload",
		"modules/caddyhttp/reverseproxy/httptransport.go: MakeTLSClientConfig": "Make TLS Client Config",
		"snake_case and kebab-case":                                            "snakecase kebabcase",
		"fix ErrTokenExpired in parse_timeout (http2)":                         "Err Token Expired parsetimeout http 2",
		"get_userName":         "getuserName user Name",
		"naïveCafé":            "naïve Café",
		"__init__ and --force": "", // no separator inside a name
	}
	for in, want := range cases {
		if got := codewords.Parts(in); got != want {
			t.Errorf("Parts(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestJoinedAndSplitWord(t *testing.T) {
	for in, want := range map[string]string{"parse_timeout": "parsetimeout", "max-age,": "maxage", "a/b_c": "", "plain": "", "x.y": ""} {
		if got := codewords.Joined(in); got != want {
			t.Errorf("Joined(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"getUser_byID": "get User by ID", "parseJSONBody?": "parse JSON Body", "parse_timeout": "", "word": ""} {
		if got := codewords.SplitWord(in); got != want {
			t.Errorf("SplitWord(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParts: any text gives valid UTF-8 made only of the text's own letters and digits,
// and the same answer twice (the index recomputes it to remove a row).
func FuzzParts(f *testing.F) {
	f.Add("OnLoad parseJSONBody http2")
	f.Add("\xff\xfeAbC")
	f.Fuzz(func(t *testing.T, s string) {
		p := codewords.Parts(s)
		if !utf8.ValidString(p) && utf8.ValidString(s) {
			t.Fatalf("Parts(%q) = %q: invalid UTF-8", s, p)
		}
		if p != codewords.Parts(s) {
			t.Fatal("Parts is not deterministic")
		}
		for _, w := range strings.Fields(p) {
			if !strings.Contains(s, w) {
				t.Fatalf("part %q is not in %q", w, s)
			}
		}
	})
}

package offline

import (
	"strings"
	"testing"
)

func TestKeywordsData(t *testing.T) {
	v, err := parseVocab(keywordsJSON)
	if err != nil {
		t.Fatalf("embedded keywords.json: %v", err)
	}
	if v.concept["jwt"] != "jwt" || !v.bug["fix"] || !v.quiet["cd"] || v.testRunners[0] != "go test" {
		t.Fatalf("keywords.json lost entries: %+v", v)
	}
	for _, bad := range []string{
		`not json`,
		`{"concepts": {"a": ["x"], "b": ["x"]}}`, // one word, two concepts
		`{"concepts": {"a": ["x"]}}`,             // lists missing
	} {
		if _, err := parseVocab([]byte(bad)); err == nil || !strings.Contains(err.Error(), "decode keywords") {
			t.Errorf("parseVocab(%s) = %v, want an error", bad, err)
		}
	}
}

package privacy

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// hasSecretWordEveryWord is how classifyKey looked for secret words before hasSecretWord:
// one strings.Index per word. TestHasSecretWordSameAsEveryWord holds the new to it.
func hasSecretWordEveryWord(key, l string) bool {
	for wi, w := range secretWords {
		for off := 0; ; {
			k := strings.Index(l[off:], w.word)
			if k < 0 {
				break
			}
			if isWordAt(key, l, wi, off+k) {
				return true
			}
			off += k + 1
		}
	}
	return false
}

// TestHasSecretWordSameAsEveryWord: the one pass over a key finds a secret word where the
// search for each word did, on keys made of secret words, their neighbours and case
// changes.
func TestHasSecretWordSameAsEveryWord(t *testing.T) {
	pieces := []string{"_", "-", ".", "x", "s", "S", "Db", "DB", "by", "my", "max", "es", "ed", "er", "or"}
	for _, w := range secretWords {
		pieces = append(pieces, w.word, strings.ToUpper(w.word), strings.ToUpper(w.word[:1])+w.word[1:])
	}
	pieces = append(pieces, "access", "aws", "credentials", "Credentials")
	rapid.Check(t, func(t *rapid.T) {
		key := strings.Join(rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 6).Draw(t, "parts"), "")
		l := strings.ToLower(key)
		if got, want := hasSecretWord(key, l), hasSecretWordEveryWord(key, l); got != want {
			t.Fatalf("%q: %v, was %v", key, got, want)
		}
	})
}

package codewords_test

import (
	"math/rand/v2"
	"strings"
	"testing"
	"unicode"

	"github.com/memnode/memnode/internal/codewords"
)

// partsBefore is Parts as it was before its fast path for plain words (schema v10's
// rules): it remembered every word. The index removes a row by recomputing its parts, so
// Parts must give exactly what it gave.
func partsBefore(text string) string {
	tokenRune := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }
	wordRune := func(r rune) bool { return tokenRune(r) || r == '_' || r == '-' }
	var b strings.Builder
	add := func(p string) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	seen := map[string]bool{}
	for text != "" {
		i := strings.IndexFunc(text, wordRune)
		if i < 0 {
			break
		}
		text = text[i:]
		j := strings.IndexFunc(text, func(r rune) bool { return !wordRune(r) })
		if j < 0 {
			j = len(text)
		}
		word := text[:j]
		text = text[j:]
		if seen[word] {
			continue
		}
		seen[word] = true
		if jw := codewords.Joined(word); jw != "" {
			add(jw)
		}
		for _, tok := range strings.FieldsFunc(word, func(r rune) bool { return !tokenRune(r) }) {
			for _, p := range codewords.Split(tok) {
				add(p)
			}
		}
	}
	return b.String()
}

// partsAlphabet mixes what the rules look at: cases, digits, separators, punctuation and
// non-ASCII letters and numbers (a capital, a lower-case letter without a capital, Arabic
// and Roman numerals, a superscript).
var partsAlphabet = []rune("aazzbqAAZMQ0099__--  ./:(\"'\n\tÉéßΣσ٣Ⅷ²x")

func TestPartsGivesWhatItGave(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 17))
	texts := []string{"", "a", "A", "0", "_", "-", "Aa", "aA", "AAa", "a1", "1a", "É", "Éa", "aÉ",
		"the OnLoad handler and OnLoad again, parse_timeout twice: parse_timeout", "http2 HTTPServer v2beta1 getURL RS256"}
	for range 200_000 {
		n := rng.IntN(40)
		var b strings.Builder
		for range n {
			b.WriteRune(partsAlphabet[rng.IntN(len(partsAlphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, text := range texts {
		if got, want := codewords.Parts(text), partsBefore(text); got != want {
			t.Fatalf("Parts(%q) = %q, before %q", text, got, want)
		}
	}
}

func FuzzPartsGivesWhatItGave(f *testing.F) {
	for _, s := range []string{"OnLoad parse_timeout", "Éa aÉ ٣a Ⅷ", "http2 http2 HTTPServer"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := codewords.Parts(text), partsBefore(text); got != want {
			t.Fatalf("Parts(%q) = %q, before %q", text, got, want)
		}
	})
}

func BenchmarkParts(b *testing.B) {
	text := strings.Repeat("The replica's full-text trigger calls it for every observation stored: "+
		"OnLoad reads config.yaml via parseJSONBody, retries http2 requests and sets max_age in handler_test.go. ", 8)
	for b.Loop() {
		codewords.Parts(text)
	}
}

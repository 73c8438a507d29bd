package embed

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"unicode"
)

// Hashing is a deterministic Embedder for tests and benchmarks: feature hashing of
// lower-cased word unigrams, with an optional synonym table that maps words onto a
// canonical word before hashing (so "bug" and "defect" land on the same feature). It
// stands in for a semantic model where ranking behaviour must be reproducible.
type Hashing struct {
	dim      int
	synonyms map[string]string
}

var _ Embedder = (*Hashing)(nil)

// NewHashing returns a hashing embedder of dimension dim (at least 1). synonyms maps a
// word to its canonical form; keys and values are compared lower-cased.
func NewHashing(dim int, synonyms map[string]string) *Hashing {
	if dim < 1 {
		dim = 1
	}
	syn := make(map[string]string, len(synonyms))
	for k, v := range synonyms {
		syn[strings.ToLower(k)] = strings.ToLower(v)
	}
	return &Hashing{dim: dim, synonyms: syn}
}

// Embed implements Embedder. A text with no words yields the zero vector.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("hashing embed: %w", err)
		}
		v := make([]float32, h.dim)
		for _, w := range words(t) {
			if c, ok := h.synonyms[w]; ok {
				w = c
			}
			f := fnv.New64a()
			f.Write([]byte(w))
			sum := f.Sum64()
			// The top bit picks a sign so unrelated words cancel rather than pile up.
			sign := float32(1)
			if sum>>63 == 1 {
				sign = -1
			}
			v[sum%uint64(h.dim)] += sign
		}
		Normalize(v)
		out[i] = v
	}
	return out, nil
}

// ModelID implements Embedder.
func (h *Hashing) ModelID() string { return fmt.Sprintf("hashing-%d", h.dim) }

// Dim implements Embedder.
func (h *Hashing) Dim() int { return h.dim }

// Close implements Embedder; there is nothing to release.
func (h *Hashing) Close() error { return nil }

// words splits text into lower-cased runs of letters, digits and underscores, the word
// notion shared by the hashing embedder and test rankers.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
}

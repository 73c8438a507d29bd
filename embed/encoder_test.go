package embed

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	cbert "github.com/nlpodyssey/cybertron/pkg/models/bert"
	"github.com/nlpodyssey/spago/mat"
)

// referenceEmbed is the unbatched path memnode used before its own encoder: cybertron's
// ModelForSequenceEncoding.Encode with MeanPooling on spago's autograd graph, one text at
// a time, then L2 normalisation.
func referenceEmbed(tb testing.TB, modelsDir, model string, c *Cybertron, text string) []float32 {
	tb.Helper()
	te, err := loadTextEncoding(modelsDir, model)
	if err != nil {
		tb.Fatal(err)
	}
	enc, err := te.Model.Encode(c.tokenize(text), cbert.MeanPooling)
	if err != nil {
		tb.Fatal(err)
	}
	v := append([]float32(nil), mat.Data[float32](enc.Value().(mat.Matrix))...)
	if !Normalize(v) {
		tb.Fatal("reference vector is zero")
	}
	return v
}

// TestEncoderMatchesCybertron: memnode's batched, parallel forward pass gives the vectors
// cybertron's own forward pass gives, within float32 rounding, for the tiny model and for
// one with MiniLM's attention shape (hidden 384, 12 heads, intermediate 1536), texts of
// different lengths in one call.
func TestEncoderMatchesCybertron(t *testing.T) {
	texts := []string{
		"memnode model check",
		benchText,
		"a",
		strings.Repeat("retry the handshake with exponential backoff ", 12),
	}
	for _, spec := range []struct {
		name string
		s    RandomModelSpec
	}{
		{"tiny", TinyModelSpec()},
		{"minilm-shaped", RandomModelSpec{Layers: 2, Hidden: 384, Heads: 12, Intermediate: 1536, MaxPositions: 512, Seed: 3}},
	} {
		t.Run(spec.name, func(t *testing.T) {
			dir := t.TempDir()
			s := spec.s
			s.Words = strings.Fields(strings.NewReplacer(",", " ", ".", " ").Replace(benchText))
			if err := WriteRandomModel(filepath.Join(dir, "test", spec.name), s); err != nil {
				t.Fatal(err)
			}
			c, err := OpenCybertron(CybertronConfig{ModelsDir: dir, Model: "test/" + spec.name, Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got, err := c.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range texts {
				want := referenceEmbed(t, dir, "test/"+spec.name, c, text)
				if len(got[i]) != len(want) {
					t.Fatalf("text %d: dim %d, want %d", i, len(got[i]), len(want))
				}
				d := maxAbsDiff(got[i], want)
				t.Logf("text %d (%d tokens): max |Δ| %.2g", i, len(c.tokenize(text)), d)
				if d > 1e-4 {
					t.Errorf("text %d (%d tokens): max |Δ| %.2g from cybertron's vector", i, len(c.tokenize(text)), d)
				}
				if cos := Cosine(got[i], want); cos < 0.99999 {
					t.Errorf("text %d: cosine %.7f to cybertron's vector", i, cos)
				}
			}
			// One text at a time gives the same vectors as the batch.
			for i, text := range texts {
				one, err := c.Embed(context.Background(), []string{text})
				if err != nil {
					t.Fatal(err)
				}
				if d := maxAbsDiff(one[0], got[i]); d != 0 {
					t.Errorf("text %d alone differs from the batch by %.2g", i, d)
				}
			}
		})
	}
}

func maxAbsDiff(a, b []float32) float64 {
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}

// TestGemmNTMatchesNaive covers the kernel's tile edges: sizes around the 4×3 tile and the
// 8-wide vector, strides wider than the rows, and a nil bias.
func TestGemmNTMatchesNaive(t *testing.T) {
	for _, sz := range [][3]int{{1, 1, 1}, {4, 3, 8}, {5, 4, 9}, {7, 7, 17}, {13, 11, 384}, {3, 2, 7}, {60, 1152, 384}} {
		m, n, k := sz[0], sz[1], sz[2]
		t.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(t *testing.T) {
			lda, ldb, ldc := k+3, k+1, n+2
			a, b, c := make([]float32, m*lda), make([]float32, n*ldb), make([]float32, m*ldc)
			bias := make([]float32, n)
			for i := range a {
				a[i] = float32(math.Sin(float64(i)))
			}
			for i := range b {
				b[i] = float32(math.Cos(float64(i) * 0.7))
			}
			for i := range bias {
				bias[i] = float32(i) / 10
			}
			for _, bs := range [][]float32{bias, nil} {
				gemmNT(m, n, k, a, lda, b, ldb, c, ldc, bs)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						var want float64
						for p := 0; p < k; p++ {
							want += float64(a[i*lda+p]) * float64(b[j*ldb+p])
						}
						if bs != nil {
							want += float64(bs[j])
						}
						if got := float64(c[i*ldc+j]); math.Abs(got-want) > 1e-3*(1+math.Abs(want)) {
							t.Fatalf("c[%d][%d] = %v, want %v", i, j, got, want)
						}
					}
				}
			}
		})
	}
}

func TestGemmNNMatchesNaive(t *testing.T) {
	m, n, k := 7, 33, 9
	lda, ldb, ldc := k+1, n+5, n+3
	a, b, c := make([]float32, m*lda), make([]float32, k*ldb), make([]float32, m*ldc)
	for i := range a {
		a[i] = float32(math.Sin(float64(i)))
	}
	for i := range b {
		b[i] = float32(math.Cos(float64(i)))
	}
	gemmNN(m, n, k, a, lda, b, ldb, c, ldc)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var want float64
			for p := 0; p < k; p++ {
				want += float64(a[i*lda+p]) * float64(b[p*ldb+j])
			}
			if got := float64(c[i*ldc+j]); math.Abs(got-want) > 1e-4 {
				t.Fatalf("c[%d][%d] = %v, want %v", i, j, got, want)
			}
		}
	}
}

func TestKernelsRejectShortSlices(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("gemmNT read past a slice without panicking")
		}
	}()
	gemmNT(2, 2, 4, make([]float32, 7), 4, make([]float32, 8), 4, make([]float32, 4), 2, nil)
}

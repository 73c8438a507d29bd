package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
)

func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	Normalize(v)
	return v
}

func TestCosineMatchesNaiveDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 40; n++ {
		a, b := randomUnit(rng, n), randomUnit(rng, n)
		var want float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		if got := Cosine(a, b); math.Abs(float64(got)-want) > 1e-5 {
			t.Fatalf("n=%d: got %v want %v", n, got, want)
		}
	}
	a := randomUnit(rng, 384)
	if got := Cosine(a, a); math.Abs(float64(got)-1) > 1e-5 {
		t.Fatalf("self cosine %v", got)
	}
	if Cosine(a, a[:383]) != 0 {
		t.Fatal("length mismatch must score 0")
	}
}

func TestNormalize(t *testing.T) {
	v := []float32{3, 4}
	if !Normalize(v) || v[0] != 0.6 || v[1] != 0.8 {
		t.Fatalf("got %v", v)
	}
	z := []float32{0, 0}
	if Normalize(z) {
		t.Fatal("zero vector normalised")
	}
	nan := []float32{float32(math.NaN()), 1}
	if Normalize(nan) {
		t.Fatal("NaN vector normalised")
	}
}

func TestVectorBlobRoundTrip(t *testing.T) {
	v := []float32{0, -1.5, float32(math.SmallestNonzeroFloat32), math.MaxFloat32, 0.1}
	b := EncodeVector(v)
	if len(b) != 20 || b[4] != 0 || b[7] != 0xbf { // -1.5 = 0xbfc00000 little-endian
		t.Fatalf("blob %x", b)
	}
	got, err := DecodeVector(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if got[i] != v[i] {
			t.Fatalf("at %d: %v != %v", i, got[i], v[i])
		}
	}
	if _, err := DecodeVector(b[:7]); !errors.Is(err, ErrBadVector) {
		t.Fatalf("odd length: %v", err)
	}
	if _, err := DecodeVector(EncodeVector([]float32{float32(math.Inf(1))})); !errors.Is(err, ErrBadVector) {
		t.Fatalf("inf: %v", err)
	}
	if v, err := DecodeVector(nil); err != nil || len(v) != 0 {
		t.Fatalf("empty: %v %v", v, err)
	}
}

// FuzzDecodeVector: blobs arrive from peers and imports. Decoding must never panic, must
// accept exactly the finite multiples of 4 bytes, and must round-trip what it accepts.
func FuzzDecodeVector(f *testing.F) {
	f.Add([]byte{})
	f.Add(EncodeVector([]float32{1, 2, 3}))
	f.Add([]byte{0, 0, 0xc0, 0x7f}) // NaN
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeVector(b)
		if err != nil {
			if !errors.Is(err, ErrBadVector) {
				t.Fatalf("unwrapped error %v", err)
			}
			return
		}
		if len(b)%4 != 0 {
			t.Fatalf("accepted %d bytes", len(b))
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatal("accepted non-finite value")
			}
		}
		if string(EncodeVector(v)) != string(b) {
			t.Fatal("round trip changed the blob")
		}
	})
}

// bruteForce scores every vector with the index's exact kernel (dotRows: another order of
// summation than Cosine, so near-ties would otherwise order differently) and checks that
// kernel against Cosine.
func bruteForce(ids []string, vecs map[string][]float32, q []float32, k int) []Scored {
	var all []Scored
	exact := make([]float32, 1)
	for _, id := range ids {
		if v, ok := vecs[id]; ok {
			dotRows(q, v, len(v), []int32{0}, exact)
			if d := math.Abs(float64(exact[0] - Cosine(q, v))); d > 1e-5 {
				panic(fmt.Sprintf("dotRows %v, Cosine %v", exact[0], Cosine(q, v)))
			}
			all = append(all, Scored{ID: id, Score: exact[0]})
		}
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	return all[:min(k, len(all))]
}

func TestIndexMatchesBruteForce(t *testing.T) {
	for _, perWorker := range []int{parallelScanMin, 7} { // serial, then parallel scan
		t.Run(fmt.Sprint("perWorker=", perWorker), func(t *testing.T) {
			testIndexMatchesBruteForce(t, perWorker)
		})
	}
}

func testIndexMatchesBruteForce(t *testing.T, perWorker int) {
	const dim = 24
	rng := rand.New(rand.NewPCG(3, 4))
	idx := NewIndex(dim)
	idx.perWorker = perWorker
	vecs := map[string][]float32{}
	var ids []string
	for i := 0; i < 500; i++ {
		id := fmt.Sprintf("id-%03d", i)
		ids = append(ids, id)
		vecs[id] = randomUnit(rng, dim)
		if err := idx.Add(id, vecs[id]); err != nil {
			t.Fatal(err)
		}
	}
	// Remove a third, replace a third, and remove an absent ID.
	for i := 0; i < 500; i += 3 {
		idx.Remove(ids[i])
		delete(vecs, ids[i])
	}
	for i := 1; i < 500; i += 3 {
		vecs[ids[i]] = randomUnit(rng, dim)
		if err := idx.Add(ids[i], vecs[ids[i]]); err != nil {
			t.Fatal(err)
		}
	}
	idx.Remove("never-added")
	if idx.Len() != len(vecs) {
		t.Fatalf("Len %d, want %d", idx.Len(), len(vecs))
	}
	for trial := 0; trial < 20; trial++ {
		q := randomUnit(rng, dim)
		for _, k := range []int{1, 10, 1000} { // int8 candidates then re-rank; every row re-ranked
			sameRanking(t, fmt.Sprint("k=", k), idx.Search(q, k), bruteForce(ids, vecs, q, k))
		}
	}
	if idx.Search(randomUnit(rng, dim), 0) != nil || idx.Search(randomUnit(rng, dim-1), 5) != nil {
		t.Fatal("k=0 or wrong dim must return nothing")
	}
	if err := idx.Add("bad", make([]float32, dim+1)); !errors.Is(err, ErrBadVector) {
		t.Fatalf("wrong dim add: %v", err)
	}
}

// sameRanking fails unless got is want: the same IDs, order and scores.
func sameRanking(t *testing.T, what string, got, want []Scored) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s rank %d: %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// TestIndexMatchesBruteForceOnClusteredVectors: MiniLM's dimension, vectors in tight
// clusters (many neighbours within int8 rounding of one another, as near-duplicate
// records give), exact duplicates (ties broken by ID), more rows than one scan block and
// than the re-rank depth, serial and parallel: the int8 scan plus exact re-rank returns
// exactly the brute-force ranking.
func TestIndexMatchesBruteForceOnClusteredVectors(t *testing.T) {
	const dim, n = 384, 3000
	rng := rand.New(rand.NewPCG(5, 6))
	centres := make([][]float32, 8)
	for i := range centres {
		centres[i] = randomUnit(rng, dim)
	}
	vecs := map[string][]float32{}
	var ids []string
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("id-%04d", i)
		v := make([]float32, dim)
		c := centres[i%len(centres)]
		spread := float32(0.02)
		if i%10 == 0 {
			spread = 0 // a duplicate of its centre
		}
		for p := range v {
			v[p] = c[p] + spread*float32(rng.NormFloat64())/float32(math.Sqrt(dim))
		}
		Normalize(v)
		ids, vecs[id] = append(ids, id), v
	}
	for _, perWorker := range []int{parallelScanMin, 700} {
		idx := NewIndex(dim)
		idx.perWorker = perWorker
		for _, id := range ids {
			if err := idx.Add(id, vecs[id]); err != nil {
				t.Fatal(err)
			}
		}
		for trial := 0; trial < 10; trial++ {
			q := append([]float32(nil), centres[trial%len(centres)]...)
			for p := range q {
				q[p] += 0.01 * float32(rng.NormFloat64()) / float32(math.Sqrt(dim))
			}
			Normalize(q)
			for _, k := range []int{1, 50, 400} {
				sameRanking(t, fmt.Sprintf("perWorker=%d trial %d k=%d", perWorker, trial, k), idx.Search(q, k), bruteForce(ids, vecs, q, k))
			}
		}
	}
}

func TestQuantize(t *testing.T) {
	codes := make([]int8, 4)
	if s := quantize([]float32{0.5, -0.25, 0, -1}, codes); s != 1.0/127 || codes[0] != 64 || codes[1] != -32 || codes[2] != 0 || codes[3] != -127 {
		t.Fatalf("quantize: scale %v codes %v", s, codes)
	}
	if s := quantize([]float32{0, 0, 0, 0}, codes); s != 0 || codes[3] != 0 {
		t.Fatalf("zero vector: scale %v codes %v", s, codes)
	}
}

func TestIndexCopiesInput(t *testing.T) {
	idx := NewIndex(2)
	v := []float32{1, 0}
	idx.Add("a", v)
	v[0], v[1] = 0, 1
	if got := idx.Search([]float32{1, 0}, 1); got[0].Score != 1 {
		t.Fatalf("index aliased caller's slice: %+v", got)
	}
}

func TestIndexConcurrentUse(t *testing.T) {
	const dim = 16
	idx := NewIndex(dim)
	idx.perWorker = 5
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			for i := 0; i < 300; i++ {
				id := fmt.Sprintf("w%d-%d", w, i%50)
				switch i % 3 {
				case 0, 1:
					idx.Add(id, randomUnit(rng, dim))
				default:
					idx.Remove(id)
				}
				for _, s := range idx.Search(randomUnit(rng, dim), 5) {
					if s.Score > 1.0001 || s.Score < -1.0001 {
						t.Errorf("score %v out of range", s.Score)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	if idx.Len() > 200 {
		t.Fatalf("Len %d exceeds distinct IDs", idx.Len())
	}
}

func TestFuseRRF(t *testing.T) {
	got := FuseRRF([][]string{{"a", "b", "c"}, {"c", "a", "d", "a"}}, 0)
	// a: 1/61+1/62, c: 1/63+1/61, b: 1/62, d: 1/63; the duplicate "a" counts once.
	want := []string{"a", "c", "b", "d"}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i, id := range want {
		if got[i].ID != id {
			t.Fatalf("rank %d: %+v, want %s", i, got, id)
		}
	}
	if d := float64(got[0].Score) - (1.0/61 + 1.0/62); math.Abs(d) > 1e-7 {
		t.Fatalf("score a %v", got[0].Score)
	}
	// Ties break by ID, so output is deterministic.
	tie := FuseRRF([][]string{{"y"}, {"x"}}, 10)
	if tie[0].ID != "x" || tie[0].Score != tie[1].Score || tie[0].Score != float32(1.0/11) {
		t.Fatalf("tie %+v", tie)
	}
	if len(FuseRRF(nil, 60)) != 0 {
		t.Fatal("empty input")
	}
}

func TestHashingEmbedder(t *testing.T) {
	h := NewHashing(64, map[string]string{"Defect": "BUG"})
	vs, err := h.Embed(context.Background(), []string{"login defect", "Login bug!", "", "other words"})
	if err != nil {
		t.Fatal(err)
	}
	if Cosine(vs[0], vs[1]) < 0.99999 {
		t.Fatalf("synonym not applied: %v", Cosine(vs[0], vs[1]))
	}
	for _, x := range vs[2] {
		if x != 0 {
			t.Fatal("empty text must embed to zero")
		}
	}
	if math.Abs(float64(Cosine(vs[3], vs[3]))-1) > 1e-6 || h.Dim() != 64 || h.ModelID() != "hashing-64" {
		t.Fatal("not normalised or wrong metadata")
	}
	again, _ := NewHashing(64, map[string]string{"defect": "bug"}).Embed(context.Background(), []string{"login defect"})
	for i := range again[0] {
		if again[0][i] != vs[0][i] {
			t.Fatal("not deterministic")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Embed(ctx, []string{"x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: %v", err)
	}
}

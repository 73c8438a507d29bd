package search_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
)

const benchDim = 384 // all-MiniLM-L6-v2's dimension

var benchVecIdx sync.Map // n → *embed.Index

// benchIndex holds one random unit vector per observation of the bench replica: the
// scan cost depends on the count and dimension only, not on what the vectors mean.
func benchIndex(b *testing.B, r *replica.Replica, n int) *embed.Index {
	b.Helper()
	if x, ok := benchVecIdx.Load(n); ok {
		return x.(*embed.Index)
	}
	rows, err := r.ReadDB().Query("SELECT id FROM observations")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	rng := rand.New(rand.NewPCG(uint64(n), 3))
	idx := embed.NewIndex(benchDim)
	v := make([]float32, benchDim)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			b.Fatal(err)
		}
		var sum float64
		for i := range v {
			v[i] = float32(rng.NormFloat64())
			sum += float64(v[i]) * float64(v[i])
		}
		inv := float32(1 / math.Sqrt(sum))
		for i := range v {
			v[i] *= inv
		}
		if err := idx.Add(id, v); err != nil {
			b.Fatal(err)
		}
	}
	benchVecIdx.Store(n, idx)
	return idx
}

func benchModeSearch(b *testing.B, n int, mode string, emb embed.Embedder) {
	r := benchReplica(b, n)
	idx := benchIndex(b, r, n)
	s := search.New(r, search.Config{})
	// memVectors (hybrid_test.go) has no query cache, unlike the node's: every query pays
	// its embedding.
	s.SetVectors(&memVectors{emb: emb, idx: idx})
	ctx := context.Background()
	durs := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := search.Query{Text: benchQueries[i%len(benchQueries)], Mode: mode}
		if i%5 == 4 {
			q.Project = "billing-api"
		}
		t0 := time.Now()
		res, err := s.Search(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		if res.Ranking != mode {
			b.Fatalf("ranking %q, want %q", res.Ranking, mode)
		}
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	reportLatency(b, durs, cpu0)
}

// cachedQueries stands for the node's query-embedding cache holding every bench query: a
// dense random unit vector per text (a MiniLM embedding is dense too; the hashing
// embedder's few non-zero components would make the int8 scan's rounding look smaller
// than it is), looked up, not computed.
type cachedQueries struct{ vecs map[string][]float32 }

var _ embed.Embedder = (*cachedQueries)(nil)

func newCachedQueries(texts []string) *cachedQueries {
	rng := rand.New(rand.NewPCG(11, 13))
	c := &cachedQueries{vecs: map[string][]float32{}}
	for _, t := range texts {
		v := make([]float32, benchDim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		embed.Normalize(v)
		c.vecs[t] = v
	}
	return c
}

func (c *cachedQueries) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v, ok := c.vecs[t]
		if !ok {
			return nil, fmt.Errorf("no cached embedding for %q", t)
		}
		out[i] = v
	}
	return out, nil
}
func (c *cachedQueries) ModelID() string { return "bench/cached" }
func (c *cachedQueries) Dim() int        { return benchDim }
func (c *cachedQueries) Close() error    { return nil }

// BenchmarkHybridSearch100k: real FTS5 over 100k observations fused with the kNN search of
// 100k 384-dim vectors, with a cached query embedding (see cachedQueries), so the figure is
// the search itself; see BenchmarkHybridSearch100kMiniLMQuery for the cost of a query the
// cache does not hold.
func BenchmarkHybridSearch100k(b *testing.B) {
	benchModeSearch(b, 100_000, search.ModeHybrid, newCachedQueries(benchQueries))
}

// BenchmarkHybridSearch10k is the same at 10k observations.
func BenchmarkHybridSearch10k(b *testing.B) {
	benchModeSearch(b, 10_000, search.ModeHybrid, newCachedQueries(benchQueries))
}

// BenchmarkVectorModeSearch100k is --mode vector through the search path (kNN search plus
// hydrating the hits from SQLite).
func BenchmarkVectorModeSearch100k(b *testing.B) {
	benchModeSearch(b, 100_000, search.ModeVector, newCachedQueries(benchQueries))
}

// BenchmarkHybridSearch100kMiniLMQuery adds the per-request query embedding with a
// MiniLM-sized model (random weights, all-MiniLM-L6-v2's shape). The node caches the
// embeddings of recent queries, so a repeated query does not pay it again.
func BenchmarkHybridSearch100kMiniLMQuery(b *testing.B) {
	dir, err := os.MkdirTemp("", "memnode-minilm-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := embed.WriteRandomModel(filepath.Join(dir, "bench", "minilm"), embed.MiniLMSizedSpec()); err != nil {
		b.Fatal(err)
	}
	c, err := embed.OpenCybertron(embed.CybertronConfig{ModelsDir: dir, Model: "bench/minilm"})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchModeSearch(b, 100_000, search.ModeHybrid, c)
}

package search_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// benchDBs caches the generated databases for the whole run: building 100k observations
// takes seconds, and the benchmark function is called several times while b.N ramps up.
var benchDBs = struct {
	sync.Mutex
	dir  string
	reps map[int]*replica.Replica
}{reps: map[int]*replica.Replica{}}

func TestMain(m *testing.M) {
	code := m.Run()
	benchDBs.Lock()
	for _, r := range benchDBs.reps {
		r.Close()
	}
	if benchDBs.dir != "" {
		os.RemoveAll(benchDBs.dir)
	}
	benchDBs.Unlock()
	os.Exit(code)
}

// Words an agent's observations are made of: a few very frequent ones, a technical middle
// and a long tail of identifiers, drawn with a Zipf distribution.
var (
	frequentWords = []string{"the", "error", "test", "file", "function", "added", "fixed", "code", "update", "config"}
	technical     = strings.Fields(`webhook stripe idempotency retry database migration schema index query cache redis
		postgres sqlite timeout latency handler middleware auth token session jwt cookie invoice billing tax vat export
		import csv json yaml parser lexer compiler build gradle android kotlin swift docker kubernetes deploy rollback
		release version upgrade dependency module package interface struct goroutine channel mutex deadlock race
		benchmark profile memory allocation leak garbage pointer slice map buffer stream socket http grpc protobuf
		endpoint route router request response header status cors tls certificate encryption hash signature keyring
		secret privacy redact filter search ranking bm25 embedding vector similarity prompt summary observation timeline
		sync replica peer device gossip membership crdt clock conflict merge tombstone vacuum wal checkpoint fsync`)
)

func benchVocab(r *rand.Rand) []string {
	v := append([]string{}, frequentWords...)
	for i := 0; i < 30000; i++ {
		n := 4 + r.IntN(8)
		var b strings.Builder
		for j := 0; j < n; j++ {
			b.WriteByte("abcdefghijklmnopqrstuvwxyz"[r.IntN(26)])
		}
		v = append(v, b.String())
	}
	// Technical terms sit in the middle of the distribution: each is in roughly 0.5–5%
	// of observations, like "webhook" in a real project's memory.
	for i, w := range technical {
		v[100+i*20] = w
	}
	return v
}

func sentence(r *rand.Rand, z *rand.Zipf, vocab []string, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[int(z.Uint64())%len(vocab)]
	}
	return strings.Join(w, " ")
}

func genObservations(n int, seed uint64) []memory.Observation {
	r := rand.New(rand.NewPCG(seed, 7))
	vocab := benchVocab(r)
	z := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	types := []string{"bugfix", "feature", "decision", "discovery", "change", "refactor"}
	projects := []string{"billing-api", "mobile-app", "memnode", "website", "infra"}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	out := make([]memory.Observation, n)
	for i := range out {
		at := base + int64(i)*60_000
		out[i] = memory.Observation{
			ID:        store.ImportID(at, fmt.Sprintf("bench:%d", i)),
			SessionID: fmt.Sprintf("s-%d", i/20),
			Project:   projects[r.IntN(len(projects))],
			Type:      types[r.IntN(len(types))],
			Title:     sentence(r, z, vocab, 6+r.IntN(6)),
			Subtitle:  sentence(r, z, vocab, 8),
			Narrative: sentence(r, z, vocab, 40+r.IntN(60)),
			Facts:     []string{sentence(r, z, vocab, 10), sentence(r, z, vocab, 10), sentence(r, z, vocab, 10)},
			Concepts:  []string{technical[r.IntN(len(technical))], technical[r.IntN(len(technical))]},
			FilesRead: []string{fmt.Sprintf("internal/%s/%s.go", technical[r.IntN(len(technical))], technical[r.IntN(len(technical))])},
			CreatedAt: at,
			Origin:    "bench-device",
			HLC:       uint64(at) << 16,
		}
	}
	return out
}

// benchGenVersion names the generator's output in the cache: bump it when genObservations
// changes what it writes.
const benchGenVersion = 1

// benchReplica returns a replica of n generated observations. Building 100k takes minutes,
// so a built database is kept in the test cache ($XDG_CACHE_HOME or ~/.cache, then
// memnode-test/search-bench), keyed by n, the generator's version and the schema version,
// and each run works on a copy of it.
func benchReplica(b *testing.B, n int) *replica.Replica {
	b.Helper()
	benchDBs.Lock()
	defer benchDBs.Unlock()
	if r, ok := benchDBs.reps[n]; ok {
		return r
	}
	if benchDBs.dir == "" {
		d, err := os.MkdirTemp("", "memnode-search-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDBs.dir = d
	}
	ctx := context.Background()
	path := filepath.Join(benchDBs.dir, fmt.Sprintf("%d.db", n))
	cached := benchCachePath(b, n)
	if err := copyFile(cached, path); err == nil {
		r, err := replica.Open(ctx, replica.Config{Path: path, Origin: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%d observations from the cache %s", n, cached)
		benchDBs.reps[n] = r
		return r
	}
	r, err := replica.Open(ctx, replica.Config{Path: path, Origin: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	obs := genObservations(n, uint64(n))
	start := time.Now()
	for i := 0; i < len(obs); i += 2000 {
		if _, err := r.Import(ctx, &store.ImportBatch{Observations: obs[i:min(i+2000, len(obs))]}); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("built %d observations in %v (%.0f obs/s)", n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
	if err := r.Close(); err != nil { // checkpoints the WAL into the file
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err == nil {
		tmp := cached + ".tmp"
		if err := copyFile(path, tmp); err == nil {
			_ = os.Rename(tmp, cached)
		}
	}
	if r, err = replica.Open(ctx, replica.Config{Path: path, Origin: "bench"}); err != nil {
		b.Fatal(err)
	}
	benchDBs.reps[n] = r
	return r
}

// benchCachePath is where the built database of n observations is cached.
func benchCachePath(b *testing.B, n int) string {
	b.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	// The schema version of a fresh replica: a migration that changes what is stored
	// makes the old cache entry unused.
	empty, err := replica.Open(context.Background(), replica.Config{Path: filepath.Join(b.TempDir(), "schema.db"), Origin: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer empty.Close()
	v, err := empty.SchemaVersion(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return filepath.Join(dir, "memnode-test", "search-bench", fmt.Sprintf("obs-%d-g%d-s%d.db", n, benchGenVersion, v))
}

func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// benchQueries mixes rare, frequent, prefix and multi-term queries.
var benchQueries = []string{
	"idempotency",                // technical, mid frequency
	"error",                      // very frequent
	"the error test",             // three very frequent terms
	"webhook retry",              // two mid terms
	"stripe webhook idempotency", // three mid terms, often fewer hits: OR fallback
	"idem*",                      // explicit prefix
	"migr",                       // as-you-type prefix
	"deadlock goroutine mutex",   // multi-term
	"zzqxv",                      // no match at all
	`"database migration"`,       // phrase
	"config timeout",             // frequent + mid
	"tombstone",                  // mid
}

func benchSearch(b *testing.B, n int) {
	r := benchReplica(b, n)
	s := search.New(r, search.Config{})
	ctx := context.Background()
	// A rare term: the title of one generated observation.
	rare, err := s.Search(ctx, search.Query{Limit: 1, Order: "oldest"})
	if err != nil || len(rare.Hits) == 0 {
		b.Fatalf("seed query: %v", err)
	}
	queries := append([]string{strings.Fields(rare.Hits[0].Title)[0] + " " + strings.Fields(rare.Hits[0].Title)[1]}, benchQueries...)
	durs := make([]time.Duration, 0, b.N)
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := search.Query{Text: queries[i%len(queries)]}
		if i%5 == 4 {
			q.Project = "billing-api"
		}
		t0 := time.Now()
		if _, err := s.Search(ctx, q); err != nil {
			b.Fatal(err)
		}
		durs = append(durs, time.Since(t0))
	}
	b.StopTimer()
	reportLatency(b, durs, cpu0)
}

// reportLatency reports the CPU time per query and the p50/p99 of durs. CPU time per
// query does not grow when other processes compete for the cores, unlike the wall-clock
// percentiles.
func reportLatency(b *testing.B, durs []time.Duration, cpu0 time.Duration) {
	b.Helper()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
	pct := func(p float64) float64 {
		return float64(durs[min(len(durs)-1, int(float64(len(durs))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkSearch10k(b *testing.B)  { benchSearch(b, 10_000) }
func BenchmarkSearch100k(b *testing.B) { benchSearch(b, 100_000) }

// BenchmarkSearchPerQuery reports the latency and CPU time of each query class on its own
// (10k).
func BenchmarkSearchPerQuery(b *testing.B) {
	r := benchReplica(b, 10_000)
	s := search.New(r, search.Config{})
	for _, q := range benchQueries {
		b.Run(strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
			cpu0 := cpuTime()
			for i := 0; i < b.N; i++ {
				if _, err := s.Search(context.Background(), search.Query{Text: q}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

package recall_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/search/recall"
)

// locomoPath is the LoCoMo archive: $MEMNODE_LOCOMO, else ../shared/data/locomo/locomo10.zip
// beside the repository (this package's directory is two levels below its root).
func locomoPath() string {
	if p := os.Getenv("MEMNODE_LOCOMO"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "..", "shared", "data", "locomo", "locomo10.zip")
}

// BenchmarkLoCoMo runs the LoCoMo evidence-retrieval protocol once per iteration
// (run it with -benchtime 1x) and prints memnode's figures beside the two baselines.
// Vector and hybrid rows use the model under $MEMNODE_EMBED_MODELS when it is set,
// else the hashing embedder (word features, no model), and say which.
func BenchmarkLoCoMo(b *testing.B) {
	path := locomoPath()
	set, err := recall.LoadLoCoMo(path)
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("no LoCoMo archive at %s: set MEMNODE_LOCOMO to locomo10.zip (snap-research/locomo, data/locomo10.zip)", path)
	}
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		reports := runSet(b, set)
		if i == 0 {
			fmt.Printf("\n")
			if err := recall.WriteTable(os.Stdout, fmt.Sprintf("LoCoMo evidence retrieval: %d turns, %d questions (categories 1-4), top %d per question",
				len(set.Docs), len(set.Questions), recall.Depth), reports); err != nil {
				b.Fatal(err)
			}
			for _, r := range reports {
				if r.Engine == "memnode fts" {
					b.ReportMetric(r.All.Recall5, "fts-recall@5")
				}
			}
		}
	}
}

// codingSet is the coding-memory query set over the claude-mem sample and testdata/coding.json.
func codingSet(tb testing.TB) *recall.Set {
	tb.Helper()
	set, err := recall.LoadCoding(context.Background(), filepath.Join("..", "..", "testdata", "fixtures", "claude-mem", "claude-mem-13.25.3-sample.db"),
		filepath.Join("testdata", "coding.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return set
}

// BenchmarkCodingMemory runs the coding-memory query set (-benchtime 1x) and prints its table.
func BenchmarkCodingMemory(b *testing.B) {
	set := codingSet(b)
	for i := 0; i < b.N; i++ {
		reports := runSet(b, set)
		if i == 0 {
			fmt.Printf("\n")
			if err := recall.WriteTable(os.Stdout, fmt.Sprintf("coding memory: %d observations, %d questions, top %d per question",
				len(set.Docs), len(set.Questions), recall.Depth), reports); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// runSet measures memnode (fts, vector, hybrid) and the baselines on set.
func runSet(tb testing.TB, set *recall.Set) []recall.Report {
	tb.Helper()
	ctx := context.Background()
	rep := testkit.OpenReplica(tb, "recall")
	ids, err := recall.ImportDocs(ctx, rep, set)
	if err != nil {
		tb.Fatal(err)
	}
	s := search.New(rep, search.Config{})
	defer s.Close()
	fts5, err := recall.NewFTS5(ctx, filepath.Join(tb.TempDir(), "fts5.db"), set)
	if err != nil {
		tb.Fatal(err)
	}
	defer fts5.Close()
	engines := []struct {
		name string
		e    recall.Engine
	}{
		{"memnode fts", recall.NewMemnode(s, search.ModeFTS, ids)},
		{"Okapi BM25 (k1 1.2, b 0.75)", recall.NewBM25(set)},
		{"FTS5 porter, words OR-ed, bm25()", fts5},
	}
	var reports []recall.Report
	for _, e := range engines {
		r, err := recall.Evaluate(ctx, e.name, set, e.e)
		if err != nil {
			tb.Fatal(err)
		}
		reports = append(reports, r)
	}
	emb, label := embedder(tb)
	vec, err := recall.EmbedDocs(ctx, emb, set)
	if err != nil {
		tb.Fatal(err)
	}
	s.SetVectors(vec)
	for _, mode := range []string{search.ModeVector, search.ModeHybrid} {
		name := "memnode " + mode + " (" + label + ")"
		r, err := recall.Evaluate(ctx, name, set, recall.NewMemnode(s, mode, ids))
		if err != nil {
			tb.Fatal(err)
		}
		reports = append(reports, r)
	}
	return reports
}

// embedder is the model under $MEMNODE_EMBED_MODELS, else the hashing embedder.
func embedder(tb testing.TB) (embed.Embedder, string) {
	tb.Helper()
	dir := os.Getenv("MEMNODE_EMBED_MODELS")
	if dir == "" {
		tb.Logf("no embedding model: vector/hybrid rows use the hashing embedder (set MEMNODE_EMBED_MODELS to a models dir with %s)", embed.DefaultModel)
		return embed.NewHashing(384, nil), "hashing, no model"
	}
	c, err := embed.OpenCybertron(embed.CybertronConfig{ModelsDir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c, c.ModelID()
}

// codingHistoryPath is the coding-history corpus: $MEMNODE_CODING_HISTORY, else
// ../shared/data/coding-history/corpus.jsonl.gz beside the repository.
func codingHistoryPath() string {
	if p := os.Getenv("MEMNODE_CODING_HISTORY"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "..", "shared", "data", "coding-history", "corpus.jsonl.gz")
}

// BenchmarkCodingHistory imports the coding history (4,744 commit observations of caddy
// and hono plus their sessions, prompts and summaries) and scores testdata/coding-history.json
// (-benchtime 1x): memnode's default agent search (every record type, as `memnode search`
// and MCP ask), its observations-only search, and the two baselines over the observations.
func BenchmarkCodingHistory(b *testing.B) {
	path := codingHistoryPath()
	set, err := recall.LoadCodingHistory(path, filepath.Join("testdata", "coding-history.json"))
	if errors.Is(err, fs.ErrNotExist) {
		b.Skipf("no coding history at %s: set MEMNODE_CODING_HISTORY to corpus.jsonl.gz", path)
	}
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		reports := runHistory(b, set)
		if i == 0 {
			fmt.Printf("\n")
			if err := recall.WriteTable(os.Stdout, fmt.Sprintf("coding history: %d records (%d observations), %d questions, top %d per question; baselines index the observations",
				len(set.Records), len(set.Docs), len(set.Questions), recall.Depth), reports); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(reports[0].All.Recall5, "default-recall@5")
		}
	}
}

// runHistory measures memnode's default and observations-only search and the baselines.
func runHistory(tb testing.TB, set *recall.Set) []recall.Report {
	tb.Helper()
	ctx := context.Background()
	dbPath := filepath.Join(tb.TempDir(), "memnode.db")
	rep := testkit.OpenReplicaAt(tb, dbPath, "recall")
	ids, err := recall.ImportDocs(ctx, rep, set)
	if err != nil {
		tb.Fatal(err)
	}
	printIndexSize(tb, dbPath)
	s := search.New(rep, search.Config{})
	defer s.Close()
	fts5, err := recall.NewFTS5(ctx, filepath.Join(tb.TempDir(), "fts5.db"), set)
	if err != nil {
		tb.Fatal(err)
	}
	defer fts5.Close()
	obs := recall.NewMemnode(s, search.ModeFTS, ids)
	engines := []struct {
		name string
		e    recall.Engine
	}{
		{"memnode default (--type all)", obs.WithType(search.TypeAll)},
		{"memnode --type observations", obs},
		{"Okapi BM25 (k1 1.2, b 0.75)", recall.NewBM25(set)},
		{"FTS5 porter, words OR-ed, bm25()", fts5},
	}
	var reports []recall.Report
	for _, e := range engines {
		r, err := recall.Evaluate(ctx, e.name, set, e.e)
		if err != nil {
			tb.Fatal(err)
		}
		reports = append(reports, r)
	}
	return reports
}

// printIndexSize prints the size of the observations' full-text index (its segments,
// observations_fts_data) per observation: what the code-aware parts column costs.
func printIndexSize(tb testing.TB, path string) {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var bytes, n int64
	if err := db.QueryRow("SELECT (SELECT sum(length(block)) FROM observations_fts_data), (SELECT count(*) FROM observations)").Scan(&bytes, &n); err != nil {
		tb.Fatal(err)
	}
	fmt.Printf("\nobservations' full-text index: %d bytes for %d observations, %d bytes per observation\n", bytes, n, bytes/max(n, 1))
}

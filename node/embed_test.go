package node

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/internal/testutil"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
)

func startEmbedNode(tb testing.TB, dir string, open func() (embed.Embedder, error), semantic bool) *Node {
	tb.Helper()
	s := testSettings()
	s.SemanticInject = semantic
	return readyNode(tb, Config{DataDir: dir, Settings: s, Embedder: open})
}

func hashingEmbedder(dim int) func() (embed.Embedder, error) {
	syn := map[string]string{"defect": "bug", "authentication": "login", "daemon": "worker", "stalled": "stuck"}
	return func() (embed.Embedder, error) { return embed.NewHashing(dim, syn), nil }
}

func statusOf(tb testing.TB, n *Node) Status {
	tb.Helper()
	st, err := n.Status(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return st.(Status)
}

func waitEmbedded(tb testing.TB, n *Node, model string, total int) {
	tb.Helper()
	want := fmt.Sprintf("on: %s, %d/%d embedded", model, total, total)
	testutil.WaitFor(tb, want, 20*time.Second, func() bool { return statusOf(tb, n).Embeddings == want })
}

var embedNotes = []string{
	"fixed login bug where the session cookie expired early",
	"background worker stuck on a closed channel",
	"added dark mode toggle to the web viewer",
	"database latency spikes during nightly vacuum",
}

func TestEmbeddingWorkerFillsVectorsAndServesHybrid(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := startEmbedNode(t, dir, hashingEmbedder(64), true)
	var ids []string
	for _, text := range embedNotes {
		res, err := n.search.SaveNote(ctx, apitype.Note{Text: text, Project: "p"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	// Records that arrive without a kick (imports, synced ops) are found by the ticker.
	rep := n.Replica()
	at := time.Now().UnixMilli()
	imported := replica.ImportID(at, "imported-1")
	if _, err := rep.Import(ctx, &replica.ImportBatch{Observations: []memory.Observation{{ID: imported, SessionID: "imp",
		Project: "p", Type: "discovery", Title: "gossip membership converges in three rounds", CreatedAt: at, Origin: "other", HLC: uint64(at) << 16}}}); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, n, "hashing-64", 5)

	res, err := n.search.Search(ctx, apitype.SearchQuery{Text: "authentication defect"})
	if err != nil || res.Ranking != search.ModeHybrid || len(res.Hits) == 0 || res.Hits[0].ID != ids[0] {
		t.Fatalf("hybrid search = %+v %v; want the login note first", res, err)
	}

	// Semantic inject: the related note, inside the context tag, within the budget.
	text, err := n.SemanticContext(ctx, "p", "the background daemon stalled on a closed channel again")
	if err != nil || !strings.Contains(text, ids[1]) || !strings.HasPrefix(text, "<memnode-context>") || !strings.HasSuffix(text, "</memnode-context>") {
		t.Fatalf("semantic context = %q %v; want a block naming %s", text, err, ids[1])
	}
	if strings.Contains(text, ids[2]) {
		t.Errorf("semantic context includes the unrelated dark-mode note: %q", text)
	}
	if short, _ := n.SemanticContext(ctx, "p", "daemon stalled"); short != "" {
		t.Errorf("short prompt got context %q", short)
	}

	// Forget: the vector goes with the row, and the index is rebuilt without it.
	if _, err := n.search.Forget(ctx, []string{ids[1]}); err != nil {
		t.Fatal(err)
	}
	w := n.embedW.Load()
	testutil.WaitFor(t, "the index to drop the forgotten note", 20*time.Second, func() bool { return w.Len() == 4 })
	waitEmbedded(t, n, "hashing-64", 4)
	res, _ = n.search.Search(ctx, apitype.SearchQuery{Text: "daemon stalled", Mode: search.ModeVector})
	for _, h := range res.Hits {
		if h.ID == ids[1] {
			t.Fatal("forgotten note still found by vector search")
		}
	}
}

func TestEmbeddingModelChangeReembeds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	n := startEmbedNode(t, dir, hashingEmbedder(64), false)
	for _, text := range embedNotes {
		if _, err := n.search.SaveNote(ctx, apitype.Note{Text: text, Project: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	waitEmbedded(t, n, "hashing-64", 4)
	if text, err := n.SemanticContext(ctx, "p", "why is the daemon stalled again after the deploy?"); err != nil || text != "" {
		t.Fatalf("semantic inject is off by default: got %q %v", text, err)
	}
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}

	n2 := startEmbedNode(t, dir, hashingEmbedder(32), false)
	waitEmbedded(t, n2, "hashing-32", 4)
	st, err := n2.Replica().VectorCounts(ctx, "hashing-64")
	if err != nil || st.Embedded != 0 {
		t.Fatalf("old model rows = %+v %v, want all replaced", st, err)
	}
	if n2.embedW.Load().Len() != 4 {
		t.Fatalf("index holds %d vectors, want 4", n2.embedW.Load().Len())
	}
}

func TestNoModelMeansFTSOnly(t *testing.T) {
	ctx := context.Background()
	noModel := func() (embed.Embedder, error) {
		return embed.OpenCybertron(embed.CybertronConfig{ModelsDir: filepath.Join(t.TempDir(), "models")})
	}
	for name, open := range map[string]func() (embed.Embedder, error){"unconfigured": nil, "not installed": noModel} {
		n := startEmbedNode(t, t.TempDir(), open, true)
		testutil.WaitFor(t, name+": status says no model", 10*time.Second, func() bool {
			return statusOf(t, n).Embeddings == "off — no model (memnode embed pull)"
		})
		if _, err := n.search.SaveNote(ctx, apitype.Note{Text: embedNotes[0], Project: "p"}); err != nil {
			t.Fatal(err)
		}
		res, err := n.search.Search(ctx, apitype.SearchQuery{Text: "login bug"})
		if err != nil || res.Ranking != search.ModeFTS || len(res.Hits) != 1 {
			t.Fatalf("%s: search = %+v %v; want FTS with one hit", name, res, err)
		}
		if text, err := n.SemanticContext(ctx, "p", "why does the login bug keep coming back?"); err != nil || text != "" {
			t.Fatalf("%s: semantic context without a model = %q %v", name, text, err)
		}
	}
}

// TestEmbeddingWithRandomCybertronModel runs the worker on cybertron's real loader and
// forward pass (a tiny BERT with random weights).
func TestEmbeddingWithRandomCybertronModel(t *testing.T) {
	ctx := context.Background()
	models := filepath.Join(t.TempDir(), "models")
	if err := embed.WriteRandomModel(filepath.Join(models, "test", "tiny"), embed.TinyModelSpec()); err != nil {
		t.Fatal(err)
	}
	open := func() (embed.Embedder, error) {
		return embed.OpenCybertron(embed.CybertronConfig{ModelsDir: models, Model: "test/tiny"})
	}
	n := startEmbedNode(t, t.TempDir(), open, false)
	for _, text := range embedNotes {
		if _, err := n.search.SaveNote(ctx, apitype.Note{Text: text, Project: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	waitEmbedded(t, n, "test/tiny", 4)
	res, err := n.search.Search(ctx, apitype.SearchQuery{Text: "dark mode toggle", Mode: search.ModeVector})
	if err != nil || len(res.Hits) != 4 {
		t.Fatalf("vector search = %+v %v; want all 4 notes ranked", res, err)
	}
}

// closeTracker records that the node closed its embedder.
type closeTracker struct {
	*embed.Hashing
	closed chan struct{}
}

func (c closeTracker) Close() error { close(c.closed); return nil }

// TestEmbeddingConcurrentWritesSearchesAndForget runs searches while the worker embeds
// new notes and rebuilds its index after forgets (go test -race), then checks Close
// stops the worker and closes the model.
func TestEmbeddingConcurrentWritesSearchesAndForget(t *testing.T) {
	ctx := context.Background()
	tr := closeTracker{embed.NewHashing(32, nil), make(chan struct{})}
	n := startEmbedNode(t, t.TempDir(), func() (embed.Embedder, error) { return tr, nil }, false)
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			if _, err := n.search.Search(ctx, apitype.SearchQuery{Text: fmt.Sprintf("note %d worker", i%40)}); err != nil {
				errc <- err
				return
			}
		}
	}()
	var ids []string
	for i := 0; i < 40; i++ {
		res, err := n.search.SaveNote(ctx, apitype.Note{Text: fmt.Sprintf("note %d about the worker pool and channel %d", i, i*7), Project: "p"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
		if i%10 == 9 {
			if _, err := n.search.Forget(ctx, []string{ids[i-1]}); err != nil {
				t.Fatal(err)
			}
		}
	}
	<-done
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	waitEmbedded(t, n, "hashing-32", 36)
	testutil.WaitFor(t, "the index to match the table", 20*time.Second, func() bool { return n.embedW.Load().Len() == 36 })
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tr.closed:
	default:
		t.Fatal("Close returned without closing the embedder")
	}
}

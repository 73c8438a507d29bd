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
	"github.com/memnode/memnode/embed/worker"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/search"
)

// The embedding worker itself is tested in embed/worker; these tests check the node's
// wiring: status, hybrid search through the API backend, semantic inject, Close.

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

func statusOf(tb testing.TB, n *Node) apitype.Status {
	tb.Helper()
	st, err := n.Status(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func waitEmbedded(tb testing.TB, n *Node, model string, total int) {
	tb.Helper()
	want := fmt.Sprintf("on: %s, %d/%d embedded", model, total, total)
	testkit.WaitFor(tb, want, 20*time.Second, func() bool { return statusOf(tb, n).Embed.State == want })
}

var embedNotes = []string{
	"fixed login bug where the session cookie expired early",
	"background worker stuck on a closed channel",
	"added dark mode toggle to the web viewer",
	"database latency spikes during nightly vacuum",
}

func TestEmbeddingHybridSearchAndSemanticContext(t *testing.T) {
	ctx := context.Background()
	n := startEmbedNode(t, t.TempDir(), hashingEmbedder(64), true)
	var ids []string
	for _, text := range embedNotes {
		res, err := n.searchSvc.Load().SaveNote(ctx, apitype.Note{Text: text, Project: "p"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	waitEmbedded(t, n, "hashing-64", 4)

	res, err := n.searchSvc.Load().Search(ctx, apitype.SearchQuery{Text: "authentication defect"})
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
	if _, err := n.searchSvc.Load().Forget(ctx, []string{ids[1]}); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, n, "hashing-64", 3)
	if text, err := n.SemanticContext(ctx, "p", "the background daemon stalled on a closed channel again"); err != nil || strings.Contains(text, ids[1]) {
		t.Fatalf("semantic context after forget = %q %v", text, err)
	}
}

func TestSemanticInjectOffByDefault(t *testing.T) {
	ctx := context.Background()
	n := startEmbedNode(t, t.TempDir(), hashingEmbedder(64), false)
	for _, text := range embedNotes {
		if _, err := n.searchSvc.Load().SaveNote(ctx, apitype.Note{Text: text, Project: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	waitEmbedded(t, n, "hashing-64", 4)
	if text, err := n.SemanticContext(ctx, "p", "why is the daemon stalled again after the deploy?"); err != nil || text != "" {
		t.Fatalf("semantic inject is off by default: got %q %v", text, err)
	}
}

func TestNoModelMeansFTSOnly(t *testing.T) {
	ctx := context.Background()
	noModel := func() (embed.Embedder, error) {
		return embed.OpenCybertron(embed.CybertronConfig{ModelsDir: filepath.Join(t.TempDir(), "models")})
	}
	for name, open := range map[string]func() (embed.Embedder, error){"unconfigured": nil, "not installed": noModel} {
		n := startEmbedNode(t, t.TempDir(), open, true)
		testkit.WaitFor(t, name+": status says no model", 10*time.Second, func() bool {
			return statusOf(t, n).Embed.State == worker.StatusNoModel
		})
		if _, err := n.searchSvc.Load().SaveNote(ctx, apitype.Note{Text: embedNotes[0], Project: "p"}); err != nil {
			t.Fatal(err)
		}
		res, err := n.searchSvc.Load().Search(ctx, apitype.SearchQuery{Text: "login bug"})
		if err != nil || res.Ranking != search.ModeFTS || len(res.Hits) != 1 {
			t.Fatalf("%s: search = %+v %v; want FTS with one hit", name, res, err)
		}
		if text, err := n.SemanticContext(ctx, "p", "why does the login bug keep coming back?"); err != nil || text != "" {
			t.Fatalf("%s: semantic context without a model = %q %v", name, text, err)
		}
	}
}

// closeTracker records that the node closed its embedder.
type closeTracker struct {
	*embed.Hashing
	closed chan struct{}
}

func (c closeTracker) Close() error { close(c.closed); return nil }

func TestCloseClosesTheEmbedder(t *testing.T) {
	ctx := context.Background()
	tr := closeTracker{embed.NewHashing(32, nil), make(chan struct{})}
	n := startEmbedNode(t, t.TempDir(), func() (embed.Embedder, error) { return tr, nil }, false)
	if _, err := n.searchSvc.Load().SaveNote(ctx, apitype.Note{Text: embedNotes[1], Project: "p"}); err != nil {
		t.Fatal(err)
	}
	waitEmbedded(t, n, "hashing-32", 1)
	if err := n.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tr.closed:
	default:
		t.Fatal("Close returned without closing the embedder")
	}
}

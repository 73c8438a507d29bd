package worker_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/embed/worker"
	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

var notes = []string{
	"fixed login bug where the session cookie expired early",
	"background worker stuck on a closed channel",
	"added dark mode toggle to the web viewer",
	"database latency spikes during nightly vacuum",
}

type fixture struct {
	rep *replica.Replica
	svc *search.Service
	w   *worker.Worker
}

// backing is a real replica file and the change feed it publishes its commits to.
type backing struct {
	rep *replica.Replica
	bus *feed.Bus
}

func openStore(tb testing.TB) backing {
	tb.Helper()
	r, bus := testkit.OpenReplicaWithFeed(tb, "test")
	return backing{r, bus}
}

// start runs a worker on a real replica file; Close runs at cleanup (before the replica's).
// Nothing but the replica's change feed tells the worker about new records.
func start(tb testing.TB, st backing, open func() (embed.Embedder, error)) fixture {
	tb.Helper()
	rep := st.rep
	svc := search.NewService(rep, search.Config{})
	w := worker.New(worker.Config{Open: open, Store: rep, Feed: st.bus, Search: svc})
	w.Start()
	tb.Cleanup(func() { w.Close() })
	return fixture{rep, svc, w}
}

func hashing(dim int) func() (embed.Embedder, error) {
	syn := map[string]string{"defect": "bug", "authentication": "login", "daemon": "worker", "stalled": "stuck"}
	return func() (embed.Embedder, error) { return embed.NewHashing(dim, syn), nil }
}

func (f fixture) save(tb testing.TB, text string) string {
	tb.Helper()
	res, err := f.svc.SaveNote(context.Background(), apitype.Note{Text: text, Project: "p"})
	if err != nil {
		tb.Fatal(err)
	}
	return res.ID
}

func (f fixture) waitEmbedded(tb testing.TB, model string, total int) {
	tb.Helper()
	want := fmt.Sprintf("on: %s, %d/%d embedded", model, total, total)
	testkit.WaitFor(tb, want, 20*time.Second, func() bool { return f.w.Status() == want && f.w.Len() == total })
}

func TestFillsVectorsAndServesHybrid(t *testing.T) {
	ctx := context.Background()
	f := start(t, openStore(t), hashing(64))
	var ids []string
	for _, text := range notes {
		ids = append(ids, f.save(t, text))
	}
	// Imported records and ops applied from a paired device reach the worker by the feed too.
	at := time.Now().UnixMilli()
	imported := store.ImportID(at, "imported-1")
	if _, err := f.rep.Import(ctx, &store.ImportBatch{Observations: []memory.Observation{{ID: imported, SessionID: "imp",
		Project: "p", Type: "discovery", Title: "gossip membership converges in three rounds", CreatedAt: at, Origin: "other", HLC: uint64(at) << 16}}}); err != nil {
		t.Fatal(err)
	}
	f.waitEmbedded(t, "hashing-64", 5)
	other := testkit.OpenReplica(t, "other-device")
	if _, err := other.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "remote", Project: "p",
		Type: "discovery", Title: "mdns announces every member on the LAN", CreatedAt: at}}}); err != nil {
		t.Fatal(err)
	}
	ops, err := other.OpsSince(ctx, "other-device", 0, 10)
	if err != nil || len(ops) != 1 {
		t.Fatalf("ops of the other device: %v %v", ops, err)
	}
	if _, err := f.rep.ApplyOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	f.waitEmbedded(t, "hashing-64", 6)

	res, err := f.svc.Search(ctx, apitype.SearchQuery{Text: "authentication defect"})
	if err != nil || res.Ranking != search.ModeHybrid || len(res.Hits) == 0 || res.Hits[0].ID != ids[0] {
		t.Fatalf("hybrid search = %+v %v; want the login note first", res, err)
	}
	res, err = f.svc.Search(ctx, apitype.SearchQuery{Text: "gossip rounds", Mode: search.ModeVector})
	if err != nil || len(res.Hits) == 0 || res.Hits[0].ID != imported {
		t.Fatalf("vector search = %+v %v; want the imported record first", res, err)
	}

	// Forget: the vector goes with the row, and the index is rebuilt without it.
	if _, err := f.svc.Forget(ctx, []string{ids[1]}); err != nil {
		t.Fatal(err)
	}
	f.waitEmbedded(t, "hashing-64", 5)
	res, _ = f.svc.Search(ctx, apitype.SearchQuery{Text: "daemon stalled", Mode: search.ModeVector})
	for _, h := range res.Hits {
		if h.ID == ids[1] {
			t.Fatal("forgotten note still found by vector search")
		}
	}
}

func TestModelChangeReembeds(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	rep := st.rep
	f := start(t, st, hashing(64))
	for _, text := range notes {
		f.save(t, text)
	}
	f.waitEmbedded(t, "hashing-64", 4)
	if err := f.w.Close(); err != nil {
		t.Fatal(err)
	}

	f2 := start(t, st, hashing(32))
	f2.waitEmbedded(t, "hashing-32", 4)
	vs, err := rep.VectorCounts(ctx, "hashing-64")
	if err != nil || vs.Embedded != 0 {
		t.Fatalf("old model rows = %+v %v, want all replaced", vs, err)
	}
}

func TestNoModelMeansFTSOnly(t *testing.T) {
	ctx := context.Background()
	noModel := func() (embed.Embedder, error) {
		return embed.OpenCybertron(embed.CybertronConfig{ModelsDir: filepath.Join(t.TempDir(), "models")})
	}
	f := start(t, openStore(t), noModel)
	testkit.WaitFor(t, "status says no model", 10*time.Second, func() bool { return f.w.Status() == worker.StatusNoModel })
	f.save(t, notes[0])
	res, err := f.svc.Search(ctx, apitype.SearchQuery{Text: "login bug"})
	if err != nil || res.Ranking != search.ModeFTS || len(res.Hits) != 1 {
		t.Fatalf("search = %+v %v; want FTS with one hit", res, err)
	}
}

// TestRandomCybertronModel runs the worker on cybertron's real loader and forward pass
// (a tiny BERT with random weights).
func TestRandomCybertronModel(t *testing.T) {
	ctx := context.Background()
	models := filepath.Join(t.TempDir(), "models")
	if err := embed.WriteRandomModel(filepath.Join(models, "test", "tiny"), embed.TinyModelSpec()); err != nil {
		t.Fatal(err)
	}
	open := func() (embed.Embedder, error) {
		return embed.OpenCybertron(embed.CybertronConfig{ModelsDir: models, Model: "test/tiny"})
	}
	f := start(t, openStore(t), open)
	for _, text := range notes {
		f.save(t, text)
	}
	f.waitEmbedded(t, "test/tiny", 4)
	res, err := f.svc.Search(ctx, apitype.SearchQuery{Text: "dark mode toggle", Mode: search.ModeVector})
	if err != nil || len(res.Hits) != 4 {
		t.Fatalf("vector search = %+v %v; want all 4 notes ranked", res, err)
	}
}

// closeTracker records that the worker closed its embedder.
type closeTracker struct {
	*embed.Hashing
	closed chan struct{}
}

func (c closeTracker) Close() error { close(c.closed); return nil }

// TestConcurrentWritesSearchesAndForget runs searches while the worker embeds new notes
// and rebuilds its index after forgets (go test -race), then checks Close stops the
// worker, closes the model and takes the vector side out of search.
func TestConcurrentWritesSearchesAndForget(t *testing.T) {
	ctx := context.Background()
	tr := closeTracker{embed.NewHashing(32, nil), make(chan struct{})}
	f := start(t, openStore(t), func() (embed.Embedder, error) { return tr, nil })
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(done)
		for i := 0; i < 200; i++ {
			if _, err := f.svc.Search(ctx, apitype.SearchQuery{Text: fmt.Sprintf("note %d worker", i%40)}); err != nil {
				errc <- err
				return
			}
		}
	}()
	var ids []string
	for i := 0; i < 40; i++ {
		ids = append(ids, f.save(t, fmt.Sprintf("note %d about the worker pool and channel %d", i, i*7)))
		if i%10 == 9 {
			if _, err := f.svc.Forget(ctx, []string{ids[i-1]}); err != nil {
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
	f.waitEmbedded(t, "hashing-32", 36)
	if err := f.w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tr.closed:
	default:
		t.Fatal("Close returned without closing the embedder")
	}
	if err := f.w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	res, err := f.svc.Search(ctx, apitype.SearchQuery{Text: "worker pool"})
	if err != nil || res.Ranking != search.ModeFTS {
		t.Fatalf("after Close search = %+v %v; want FTS only", res.Ranking, err)
	}
}

func TestCloseBeforeStart(t *testing.T) {
	opened := make(chan struct{}, 1)
	w := worker.New(worker.Config{Open: func() (embed.Embedder, error) { opened <- struct{}{}; return embed.NewHashing(8, nil), nil }})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Start() // after Close: does nothing
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-opened:
		t.Fatal("a closed worker opened its model")
	default:
	}
}

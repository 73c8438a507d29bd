// Package worker keeps an embedding model's vectors in step with the stored observations
// and serves them as the vector side of hybrid search.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/prio"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// Tuning.
const (
	batch = 32 // observations embedded per transaction
	// retry is how often a missing model is looked for again, so a model pulled
	// while the node runs is picked up without a restart.
	retry = 10 * time.Second
	// queryCacheSize bounds the cached query embeddings (a query costs one forward pass).
	queryCacheSize = 256
)

// StatusNoModel is the status while no model is installed.
const StatusNoModel = "off — no model (memnode embed pull)"

// Store is what the worker reads and writes: observations without a vector of a model,
// and the vectors table.
type Store interface {
	LoadVectors(ctx context.Context, model string, fn func(id string, blob []byte) error) error
	VectorCounts(ctx context.Context, model string) (store.VectorStats, error)
	MissingVectors(ctx context.Context, model string, limit int) ([]store.VectorSource, error)
	PutVectors(ctx context.Context, model string, rows []store.VectorRow) (int, error)
}

// Searcher receives the worker as its vector side once a model is up, and loses it
// (nil) when the worker stops.
type Searcher interface {
	SetVectors(search.Vectors)
}

var (
	_ Searcher       = (*search.Service)(nil)
	_ search.Vectors = (*Worker)(nil)
)

// Config configures a Worker.
type Config struct {
	// Open opens the embedding model; an error wrapping embed.ErrNoModel means none is
	// installed yet (retried every 10 s).
	Open  func() (embed.Embedder, error)
	Store Store
	// Feed is the store's change feed: a commit that adds or forgets observations (local,
	// synced or imported) wakes the worker. Without one the worker embeds what is there at
	// start only.
	Feed   *feed.Bus
	Search Searcher
	Logger *slog.Logger
	// Background, if set, is called on the worker's goroutine before it starts (the node
	// lowers that thread's CPU priority); its error is only logged.
	Background func() error
}

// Worker is the embedding worker: New, then Start, then Close.
type Worker struct {
	cfg Config
	log *slog.Logger

	emb      atomic.Pointer[embedderBox] // set once the model is open
	idx      atomic.Pointer[embed.Index] // replaced whole when rebuilt
	status   atomic.Pointer[string]
	progress atomic.Pointer[Progress]

	cacheMu sync.Mutex
	cache   map[string][]float32
	order   []string // insertion order, for eviction

	mu      sync.Mutex
	cancel  context.CancelFunc
	started bool
	done    chan struct{}
}

type embedderBox struct{ e embed.Embedder }

// New returns a worker that has not started.
func New(cfg Config) *Worker {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Worker{cfg: cfg, log: cfg.Logger, cache: make(map[string][]float32), done: make(chan struct{})}
	w.setStatus("off — loading the model")
	return w
}

// Start runs the worker until Close. It returns at once: the model opens in the background.
// Start after Close, or a second Start, does nothing.
func (w *Worker) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return
	}
	w.started = true
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	var sub *feed.Subscription
	if w.cfg.Feed != nil {
		sub = w.cfg.Feed.Subscribe(0) // before Start returns: no later commit is missed
	}
	go func() {
		defer close(w.done)
		if sub != nil {
			defer sub.Close()
		}
		if w.cfg.Background != nil {
			if err := w.cfg.Background(); err != nil {
				w.log.Debug("embedding worker keeps normal CPU priority", "err", err)
			}
		}
		w.run(ctx, sub)
	}()
}

// Close stops the worker, waits for it, and closes the model; it is idempotent.
func (w *Worker) Close() error {
	w.mu.Lock()
	if !w.started {
		w.started = true // a later Start does nothing
		close(w.done)
	} else if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
	<-w.done
	return nil
}

// Status is the one-line state shown by `memnode status`.
func (w *Worker) Status() string { return *w.status.Load() }

func (w *Worker) setStatus(s string) { w.status.Store(&s) }

// Progress is how far the worker has embedded the observations for its model.
type Progress struct {
	Model           string
	Embedded, Total int
	Failed          int
}

// Progress returns the worker's latest progress (zero before its model is open).
func (w *Worker) Progress() Progress {
	if p := w.progress.Load(); p != nil {
		return *p
	}
	return Progress{}
}

func (w *Worker) run(ctx context.Context, sub *feed.Subscription) {
	e, ok := w.openModel(ctx)
	if !ok {
		return
	}
	defer func() {
		w.cfg.Search.SetVectors(nil)
		e.Close()
	}()
	model := e.ModelID()
	w.setStatus("on: " + model + ", loading vectors")
	idx, err := w.load(ctx, e)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Error("load vectors failed; search uses FTS only", "err", err)
			w.setStatus("off — loading vectors failed: " + err.Error())
		}
		return
	}
	w.idx.Store(idx)
	w.emb.Store(&embedderBox{e})
	w.cfg.Search.SetVectors(w)
	w.log.Info("embeddings on", "model", model, "dim", e.Dim(), "vectors", idx.Len())

	for {
		more, err := w.step(ctx, e)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.log.Warn("embedding step failed; retrying", "err", err)
			more = false
		}
		if more {
			continue
		}
		if !wait(ctx, sub) {
			return
		}
	}
}

// wait blocks until a commit may have given the worker work: observations to embed, or
// forgotten ones whose vectors left the table. An overflowed feed counts as such a commit.
// It returns false once ctx is done or the feed is closed (without a feed, only ctx ends it).
func wait(ctx context.Context, sub *feed.Subscription) bool {
	var ready <-chan struct{}
	if sub != nil {
		ready = sub.Ready()
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case _, ok := <-ready:
			if !ok {
				return false
			}
			changes, overflowed := sub.Take()
			if overflowed {
				return true
			}
			for _, c := range changes {
				if len(c.Observations) > 0 || len(c.Forgotten) > 0 {
					return true
				}
			}
		}
	}
}

// openModel opens the embedder, retrying while no model is installed.
func (w *Worker) openModel(ctx context.Context) (embed.Embedder, bool) {
	lastErr := ""
	for {
		e, err := w.cfg.Open()
		if err == nil {
			return e, true
		}
		if errors.Is(err, embed.ErrNoModel) {
			w.setStatus(StatusNoModel)
		} else {
			if err.Error() != lastErr { // once per distinct failure, not every retry
				w.log.Warn("embedding model failed to load; search uses FTS only", "err", err)
				lastErr = err.Error()
			}
			w.setStatus("off — model failed to load: " + err.Error())
		}
		t := time.NewTimer(retry)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false
		case <-t.C:
		}
	}
}

// load builds an index from the stored vectors of e's model.
func (w *Worker) load(ctx context.Context, e embed.Embedder) (*embed.Index, error) {
	idx := embed.NewIndex(e.Dim())
	bad := 0
	err := w.cfg.Store.LoadVectors(ctx, e.ModelID(), func(id string, blob []byte) error {
		v, err := embed.DecodeVector(blob)
		if err != nil || len(v) != e.Dim() {
			bad++ // re-embedding fixes it: see step's reconcile
			return nil
		}
		return idx.Add(id, v)
	})
	if bad > 0 {
		w.log.Warn("ignored undecodable stored vectors", "count", bad)
	}
	return idx, err
}

// step reconciles the index with the table, then embeds one batch of observations
// without a vector of the model. It reports whether more are waiting.
func (w *Worker) step(ctx context.Context, e embed.Embedder) (bool, error) {
	model := e.ModelID()
	st, err := w.cfg.Store.VectorCounts(ctx, model)
	if err != nil {
		return false, err
	}
	// Only this goroutine adds vectors, and it adds each to the table and the index
	// together: an index larger than the table means observations were forgotten (here
	// or by a peer's tombstone), and their vectors went with them.
	if w.idx.Load().Len() > st.Embedded-st.Failed {
		idx, err := w.load(ctx, e)
		if err != nil {
			return false, err
		}
		w.idx.Store(idx)
	}
	w.setProgress(model, st)
	if st.Embedded >= st.Total {
		return false, nil
	}
	srcs, err := w.cfg.Store.MissingVectors(ctx, model, batch)
	if err != nil || len(srcs) == 0 {
		return false, err
	}
	texts := make([]string, len(srcs))
	for i, s := range srcs {
		texts[i] = s.Text
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		// One bad text must not stall the rest: embed one by one, and mark the ones
		// that fail so they are not retried forever.
		vecs = make([][]float32, len(texts))
		for i, t := range texts {
			v, err := e.Embed(ctx, []string{t})
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			if err != nil {
				w.log.Warn("observation could not be embedded", "id", srcs[i].ID, "err", err)
				continue
			}
			vecs[i] = v[0]
		}
	}
	rows := make([]store.VectorRow, len(srcs))
	for i, s := range srcs {
		rows[i] = store.VectorRow{RowID: s.RowID, ID: s.ID, Blob: []byte{}}
		if i < len(vecs) && len(vecs[i]) == e.Dim() {
			rows[i].Dim, rows[i].Blob = e.Dim(), embed.EncodeVector(vecs[i])
		}
	}
	// The write takes the single SQLite writer: never on the lowered thread (prio.Unlowered).
	prio.Unlowered(func() { _, err = w.cfg.Store.PutVectors(ctx, model, rows) })
	if err != nil {
		return false, err
	}
	idx := w.idx.Load()
	for i, r := range rows {
		if r.Dim > 0 {
			if err := idx.Add(r.ID, vecs[i]); err != nil {
				return false, err
			}
		}
	}
	st.Embedded += len(rows)
	w.setProgress(model, st)
	return len(srcs) == batch, nil
}

func (w *Worker) setProgress(model string, st store.VectorStats) {
	w.progress.Store(&Progress{Model: model, Embedded: min(st.Embedded, st.Total), Total: st.Total, Failed: st.Failed})
	s := fmt.Sprintf("on: %s, %d/%d embedded", model, min(st.Embedded, st.Total), st.Total)
	if st.Failed > 0 {
		s += fmt.Sprintf(" (%d could not be embedded)", st.Failed)
	}
	w.setStatus(s)
}

// Nearest implements search.Vectors.
func (w *Worker) Nearest(ctx context.Context, text string, k int) ([]embed.Scored, error) {
	b := w.emb.Load()
	if b == nil {
		return nil, nil
	}
	q, err := w.queryVector(ctx, b.e, text)
	if err != nil {
		return nil, err
	}
	return w.idx.Load().Search(q, k), nil
}

// Len implements search.Vectors.
func (w *Worker) Len() int {
	if idx := w.idx.Load(); idx != nil {
		return idx.Len()
	}
	return 0
}

// queryVector embeds a query, caching recent ones: agents repeat and refine queries,
// and a forward pass costs more than the whole kNN scan.
func (w *Worker) queryVector(ctx context.Context, e embed.Embedder, text string) ([]float32, error) {
	w.cacheMu.Lock()
	v, ok := w.cache[text]
	w.cacheMu.Unlock()
	if ok {
		return v, nil
	}
	vs, err := e.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	w.cacheMu.Lock()
	defer w.cacheMu.Unlock()
	if _, ok := w.cache[text]; !ok {
		if len(w.order) >= queryCacheSize {
			delete(w.cache, w.order[0])
			w.order = w.order[1:]
		}
		w.cache[text] = vs[0]
		w.order = append(w.order, text)
	}
	return vs[0], nil
}

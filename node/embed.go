package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
)

// Embedding worker tuning.
const (
	embedBatch = 32 // observations embedded per transaction
	// embedTick finds records that arrived without a kick (sync applies, imports, notes)
	// and notices forgotten ones.
	embedTick = time.Second
	// embedRetry is how often a missing model is looked for again, so a model pulled
	// while the node runs is picked up without a restart.
	embedRetry = 10 * time.Second
	// queryCacheSize bounds the cached query embeddings (a query costs one forward pass).
	queryCacheSize = 256
)

// Semantic inject bounds.
const (
	semanticMinPromptRunes = 20
	semanticTokenBudget    = 600
	// semanticMinScore is the cosine below which a neighbour is not worth injecting.
	semanticMinScore = 0.35
)

const embedOffNoModel = "off — no model (memnode embed pull)"

// embedWorker keeps the vectors table and the in-memory index in step with the
// observations, and is the vector side of hybrid search (search.Vectors).
type embedWorker struct {
	open func() (embed.Embedder, error)
	rep  *replica.Replica
	svc  *search.Service
	log  *slog.Logger
	kick chan struct{}

	emb    atomic.Pointer[embedderBox] // set once the model is open
	idx    atomic.Pointer[embed.Index] // replaced whole when rebuilt
	status atomic.Pointer[string]

	cacheMu sync.Mutex
	cache   map[string][]float32
	order   []string // insertion order, for eviction
}

type embedderBox struct{ e embed.Embedder }

var _ search.Vectors = (*embedWorker)(nil)

// startEmbed starts the embedding worker when an embedder is configured.
func (n *Node) startEmbed(ctx context.Context, rep *replica.Replica, svc *search.Service) {
	if n.cfg.Embedder == nil {
		return
	}
	w := &embedWorker{open: n.cfg.Embedder, rep: rep, svc: svc, log: n.log, kick: make(chan struct{}, 1),
		cache: make(map[string][]float32)}
	w.setStatus("off — loading the model")
	n.embedW.Store(w)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		if err := lowerPriority(); err != nil {
			n.log.Debug("embedding worker keeps normal CPU priority", "err", err)
		}
		w.run(ctx)
	}()
}

// kickEmbed wakes the embedding worker after a commit.
func (n *Node) kickEmbed() {
	if w := n.embedW.Load(); w != nil {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// embedStatus is Status.Embeddings.
func (n *Node) embedStatus() string {
	if w := n.embedW.Load(); w != nil {
		return *w.status.Load()
	}
	return embedOffNoModel
}

func (w *embedWorker) setStatus(s string) { w.status.Store(&s) }

func (w *embedWorker) run(ctx context.Context) {
	e, ok := w.openModel(ctx)
	if !ok {
		return
	}
	defer func() {
		w.svc.SetVectors(nil)
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
	w.svc.SetVectors(w)
	w.log.Info("embeddings on", "model", model, "dim", e.Dim(), "vectors", idx.Len())

	tick := time.NewTicker(embedTick)
	defer tick.Stop()
	for {
		// The tick finds records this node did not commit itself (synced, imported);
		// nothing to scan when no transaction committed since the last step.
		gen := w.rep.Generation()
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
		for idle := true; idle; {
			select {
			case <-ctx.Done():
				return
			case <-w.kick:
				idle = false
			case <-tick.C:
				idle = w.rep.Generation() == gen
			}
		}
	}
}

// openModel opens the embedder, retrying while no model is installed.
func (w *embedWorker) openModel(ctx context.Context) (embed.Embedder, bool) {
	lastErr := ""
	for {
		e, err := w.open()
		if err == nil {
			return e, true
		}
		if errors.Is(err, embed.ErrNoModel) {
			w.setStatus(embedOffNoModel)
		} else {
			if err.Error() != lastErr { // once per distinct failure, not every retry
				w.log.Warn("embedding model failed to load; search uses FTS only", "err", err)
				lastErr = err.Error()
			}
			w.setStatus("off — model failed to load: " + err.Error())
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(embedRetry):
		}
	}
}

// load builds an index from the stored vectors of e's model.
func (w *embedWorker) load(ctx context.Context, e embed.Embedder) (*embed.Index, error) {
	idx := embed.NewIndex(e.Dim())
	bad := 0
	err := w.rep.LoadVectors(ctx, e.ModelID(), func(id string, blob []byte) error {
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
func (w *embedWorker) step(ctx context.Context, e embed.Embedder) (bool, error) {
	model := e.ModelID()
	st, err := w.rep.VectorCounts(ctx, model)
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
	srcs, err := w.rep.MissingVectors(ctx, model, embedBatch)
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
	rows := make([]replica.VectorRow, len(srcs))
	for i, s := range srcs {
		rows[i] = replica.VectorRow{RowID: s.RowID, ID: s.ID, Blob: []byte{}}
		if i < len(vecs) && len(vecs[i]) == e.Dim() {
			rows[i].Dim, rows[i].Blob = e.Dim(), embed.EncodeVector(vecs[i])
		}
	}
	if _, err := w.rep.PutVectors(ctx, model, rows); err != nil {
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
	return len(srcs) == embedBatch, nil
}

func (w *embedWorker) setProgress(model string, st replica.VectorStats) {
	s := fmt.Sprintf("on: %s, %d/%d embedded", model, min(st.Embedded, st.Total), st.Total)
	if st.Failed > 0 {
		s += fmt.Sprintf(" (%d could not be embedded)", st.Failed)
	}
	w.setStatus(s)
}

// Nearest implements search.Vectors.
func (w *embedWorker) Nearest(ctx context.Context, text string, k int) ([]embed.Scored, error) {
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
func (w *embedWorker) Len() int {
	if idx := w.idx.Load(); idx != nil {
		return idx.Len()
	}
	return 0
}

// queryVector embeds a query, caching recent ones: agents repeat and refine queries,
// and a forward pass costs more than the whole kNN scan.
func (w *embedWorker) queryVector(ctx context.Context, e embed.Embedder, text string) ([]float32, error) {
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

// SemanticContext serves POST /api/context/semantic: the past observations of project
// most related to a user's prompt, as a context block of at most ~600 tokens. It is
// empty when the semantic_inject setting is off, the prompt is short, no model is up,
// or nothing is similar enough.
func (n *Node) SemanticContext(ctx context.Context, project, prompt string) (string, error) {
	if !n.cfg.Settings.SemanticInject || len([]rune(strings.TrimSpace(prompt))) < semanticMinPromptRunes {
		return "", nil
	}
	rep, w := n.rep.Load(), n.embedW.Load()
	if rep == nil {
		return "", errNotReady
	}
	if w == nil {
		return "", nil
	}
	limit := n.cfg.Settings.SemanticInjectLimit
	if limit <= 0 {
		limit = configs.DefaultSemanticInjectLimit
	}
	hits, err := w.svc.Related(ctx, privacy.Clean(prompt), project, limit, semanticMinScore)
	if err != nil || len(hits) == 0 {
		return "", err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	obs, err := rep.GetObservations(ctx, ids)
	if err != nil || len(obs) == 0 {
		return "", err
	}
	return renderSemantic(obs, semanticTokenBudget), nil
}

// renderSemantic lists observations, most related first, until the token budget is
// spent; the first one is always shown (cut to the budget).
func renderSemantic(obs []memory.Observation, budget int) string {
	head := "<" + privacy.ContextTag + ">\nmemnode: past observations related to this prompt (get_observations([IDs]) for details):\n"
	tail := "</" + privacy.ContextTag + ">"
	used := memory.EstimateTokens(head + tail)
	var b strings.Builder
	b.WriteString(head)
	shown := 0
	for _, o := range obs {
		line := "- " + o.ID + " " + o.Type + ": " + strings.Join(strings.Fields(o.Title), " ")
		if s := strings.Join(strings.Fields(o.Subtitle), " "); s != "" {
			line += " — " + s
		}
		if len(o.Facts) > 0 {
			line += " (" + strings.Join(strings.Fields(o.Facts[0]), " ") + ")"
		}
		line += "\n"
		cost := memory.EstimateTokens(line)
		if used+cost > budget {
			if shown > 0 {
				break
			}
			line = clipRunes(line, (budget-used)*4) + "\n"
			cost = memory.EstimateTokens(line)
		}
		b.WriteString(line)
		used += cost
		shown++
	}
	b.WriteString(tail)
	return b.String()
}

func clipRunes(s string, maxBytes int) string {
	if maxBytes <= 1 {
		return "…"
	}
	if len(s) <= maxBytes {
		return strings.TrimRight(s, "\n")
	}
	cut := maxBytes - len("…")
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

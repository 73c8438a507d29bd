package search

import (
	"context"
	"fmt"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/embed"
)

// Ranking modes of Query.Mode.
const (
	ModeFTS    = "fts"    // FTS5 bm25 only
	ModeVector = "vector" // cosine kNN over observation embeddings only
	ModeHybrid = "hybrid" // reciprocal rank fusion of both (the default when vectors exist)
)

// fuseDepth is how many hits of each side enter the fusion: enough for the first pages,
// and the RRF contribution of rank 50 (1/110) is already small.
const fuseDepth = 50

// hydrateChunk is how many vector candidates are looked up per query; the ID list is
// padded to this size so there is one statement shape per filter combination.
const hydrateChunk = 100

// filteredOversample is how many nearest vectors a filtered query asks for: the kNN scan
// costs the same for any k, and filters (project, time, type) drop most neighbours.
const filteredOversample = 2000

// Vectors is the semantic side of hybrid search (the node's embedding worker). It is
// set once an embedding model is up; implementations must be safe for concurrent use.
type Vectors interface {
	// Nearest embeds text and returns up to k observation IDs by cosine similarity,
	// best first.
	Nearest(ctx context.Context, text string, k int) ([]embed.Scored, error)
	// Len is how many observations are indexed; 0 keeps the default mode at FTS.
	Len() int
}

type vectorsBox struct{ v Vectors }

// SetVectors installs (or, with nil, removes) the vector side. Queries running at the
// time finish with the side they started with.
func (s *Searcher) SetVectors(v Vectors) {
	if v == nil {
		s.vec.Store(nil)
		return
	}
	s.vec.Store(&vectorsBox{v})
}

func (s *Searcher) vectors() Vectors {
	if b := s.vec.Load(); b != nil {
		return b.v
	}
	return nil
}

// normalizeMode validates q.Mode; resolveMode picks the effective one.
func normalizeMode(q *Query) error {
	q.Mode = strings.ToLower(strings.TrimSpace(q.Mode))
	switch q.Mode {
	case "", ModeFTS, ModeVector, ModeHybrid:
		return nil
	}
	return fmt.Errorf("%w: mode must be fts, vector or hybrid (got %q)", ErrInvalid, q.Mode)
}

// resolveMode returns the ranking q gets: hybrid by default when vectors exist and the
// query ranks by relevance and can return observations; an explicit hybrid without
// vectors falls back to FTS; an explicit vector without vectors is an error.
func (s *Searcher) resolveMode(q *Query) (string, Vectors, error) {
	v := s.vectors()
	usable := v != nil && v.Len() > 0 && q.Text != "" && hasObservations(q)
	switch q.Mode {
	case ModeFTS:
		return ModeFTS, nil, nil
	case ModeVector:
		if !usable {
			return "", nil, fmt.Errorf("%w: vector search needs an embedding model and embedded observations (memnode embed pull; see memnode status)", ErrInvalid)
		}
		return ModeVector, v, nil
	case ModeHybrid:
		if !usable {
			return ModeFTS, nil, nil
		}
		return ModeHybrid, v, nil
	}
	if usable && q.Order == OrderRelevance {
		return ModeHybrid, v, nil
	}
	return ModeFTS, nil, nil
}

func hasObservations(q *Query) bool {
	for _, k := range q.kinds() {
		if k == apitype.KindObservation {
			return true
		}
	}
	return false
}

func hasFilters(q *Query) bool {
	return q.Project != "" || q.Since != 0 || q.Until != 0 || q.Device != "" || len(q.ObsTypes) > 0 || q.File != "" || q.Platform != ""
}

// searchVectors answers q (normalized, with text) in vector or hybrid mode.
func (s *Searcher) searchVectors(ctx context.Context, q Query, mode string, v Vectors) (apitype.Results, error) {
	need := q.Offset + q.Limit
	depth := max(need, fuseDepth)
	res := apitype.Results{Query: q.Text, Mode: "similar", Ranking: mode, Hits: []apitype.Hit{}}

	vec, err := s.vectorHits(ctx, &q, v, depth, 0)
	if err != nil {
		return apitype.Results{}, err
	}
	if mode == ModeVector {
		hits := make([]apitype.Hit, len(vec))
		for i, sh := range vec {
			hits[i] = sh.hit
			hits[i].Score = -float64(sh.score) // lower is better, as for bm25
		}
		sortHits(hits, q.Order, true)
		res.Hits = page(hits, q.Offset, q.Limit)
		return res, nil
	}

	fq := q
	fq.Mode, fq.Offset, fq.Limit = ModeFTS, 0, min(depth, MaxLimit)
	fts, err := s.Search(ctx, fq)
	if err != nil {
		return apitype.Results{}, err
	}
	res.Mode = fts.Mode
	res.Hits = fuse(fts.Hits, vec, q.Order)
	res.Hits = page(res.Hits, q.Offset, q.Limit)
	return res, nil
}

type scoredHit struct {
	hit   apitype.Hit
	score float32
}

// fuse merges the FTS and vector rankings by reciprocal rank fusion. Score is the
// negated fused score, so lower is better as everywhere else.
func fuse(fts []apitype.Hit, vec []scoredHit, order string) []apitype.Hit {
	byID := make(map[string]apitype.Hit, len(fts)+len(vec))
	lists := [][]string{make([]string, 0, len(fts)), make([]string, 0, len(vec))}
	for _, h := range fts {
		byID[h.ID] = h
		lists[0] = append(lists[0], h.ID)
	}
	for _, sh := range vec {
		if _, ok := byID[sh.hit.ID]; !ok {
			byID[sh.hit.ID] = sh.hit
		}
		lists[1] = append(lists[1], sh.hit.ID)
	}
	fused := embed.FuseRRF(lists, embed.DefaultRRFK)
	out := make([]apitype.Hit, len(fused))
	for i, f := range fused {
		h := byID[f.ID]
		h.Score = -float64(f.Score)
		out[i] = h
	}
	sortHits(out, order, true)
	return out
}

// vectorHits returns up to n observations nearest to q.Text that pass q's filters, best
// first; neighbours below minScore (and never a non-positive one: it shares nothing with
// the query) are left out.
func (s *Searcher) vectorHits(ctx context.Context, q *Query, v Vectors, n int, minScore float32) ([]scoredHit, error) {
	k := n
	if hasFilters(q) {
		k = max(k, filteredOversample)
	}
	near, err := v.Nearest(ctx, q.Text, k)
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	var cand []embed.Scored
	for _, c := range near {
		if c.Score > 0 && c.Score >= minScore {
			cand = append(cand, c)
		}
	}
	out := make([]scoredHit, 0, min(n, len(cand)))
	for i := 0; i < len(cand) && len(out) < n; i += hydrateChunk {
		chunk := cand[i:min(i+hydrateChunk, len(cand))]
		hits, err := s.hydrate(ctx, q, chunk)
		if err != nil {
			return nil, err
		}
		for _, c := range chunk {
			if h, ok := hits[c.ID]; ok && len(out) < n {
				out = append(out, scoredHit{h, c.Score})
			}
		}
	}
	return out, nil
}

// hydrate looks observations up by ID with q's filters applied. IDs that name nothing
// (forgotten since they were indexed) or fail a filter are absent from the result.
func (s *Searcher) hydrate(ctx context.Context, q *Query, ids []embed.Scored) (map[string]apitype.Hit, error) {
	list := make([]string, len(ids))
	for i, c := range ids {
		list[i] = c.ID
	}
	found, err := s.idx.HitsByID(ctx, apitype.KindObservation, list, filter(q))
	if err != nil {
		return nil, fmt.Errorf("vector search: %w", err)
	}
	out := make(map[string]apitype.Hit, len(found))
	for _, h := range found {
		out[h.ID] = hit(apitype.KindObservation, h)
	}
	return out, nil
}

// Related returns up to limit observations of project related to text (a user's
// prompt): vector neighbours at least minScore similar, fused with the observations that
// contain every word of text. Without vectors it returns nothing: a long prompt's words
// alone select too loosely to be worth injecting.
func (s *Searcher) Related(ctx context.Context, text, project string, limit int, minScore float32) ([]apitype.Hit, error) {
	v := s.vectors()
	text = strings.TrimSpace(text)
	if v == nil || v.Len() == 0 || text == "" || limit <= 0 {
		return nil, nil
	}
	q := Query{Text: text, Project: project, Type: TypeObservations}
	if err := q.Normalize(); err != nil {
		return nil, err
	}
	vec, err := s.vectorHits(ctx, &q, v, fuseDepth, minScore)
	if err != nil {
		return nil, err
	}
	var fts []apitype.Hit
	if e := Parse(text); !e.Empty() {
		if fts, err = s.collect(ctx, &q, allTerms(e, map[string]int{}), fuseDepth); err != nil {
			return nil, err
		}
	}
	hits := fuse(fts, vec, OrderRelevance)
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, nil
}

// SetVectors installs the vector side of hybrid search (nil removes it).
func (v *Service) SetVectors(vs Vectors) { v.s.SetVectors(vs) }

// Related: see Searcher.Related.
func (v *Service) Related(ctx context.Context, text, project string, limit int, minScore float32) ([]apitype.Hit, error) {
	return v.s.Related(ctx, text, project, limit, minScore)
}

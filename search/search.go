package search

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/store"
)

// Scopes of Query.Type.
const (
	TypeAll          = "all"
	TypeObservations = "observations"
	TypeSessions     = "sessions" // session summaries
	TypePrompts      = "prompts"
)

// Orders of Query.Order.
const (
	OrderRelevance = "relevance"
	OrderNewest    = "newest"
	OrderOldest    = "oldest"
)

// Defaults and bounds.
const (
	MaxLimit  = 200
	MaxOffset = 10000
	// DefaultWindow bounds how many matches of one kind are ranked per query: when a query
	// matches more, only the newest DefaultWindow (by local arrival) are ranked, which keeps
	// a very frequent term as cheap as a rare one.
	DefaultWindow = 200
	// DefaultRareLimit: see Config.RareLimit.
	DefaultRareLimit = 1000
	// minResults is how few AND hits trigger the OR fallback.
	minResults = 3
	// expandBelow: the last word is also matched as a prefix only while the word itself
	// matches fewer rows than this (see searchKind).
	expandBelow = 50
)

// ErrInvalid marks a query the caller must fix.
var ErrInvalid = errors.New("invalid search request")

// Query is one search request: the API's SearchQuery, with the node's validation.
// The zero value (plus Text) is a valid query.
type Query apitype.SearchQuery

// Normalize fills defaults and validates.
func (q *Query) Normalize() error {
	q.Text = strings.TrimSpace(q.Text)
	switch q.Type {
	case "":
		q.Type = TypeAll
	case TypeAll, TypeObservations, TypeSessions, TypePrompts:
	case "observation", "obs":
		q.Type = TypeObservations
	case "session", "summaries", "summary":
		q.Type = TypeSessions
	case "prompt":
		q.Type = TypePrompts
	default:
		return fmt.Errorf("%w: type must be observations, sessions, prompts or all (got %q)", ErrInvalid, q.Type)
	}
	switch q.Order {
	case "":
		q.Order = OrderRelevance
	case OrderRelevance, OrderNewest, OrderOldest:
	default:
		return fmt.Errorf("%w: order must be relevance, newest or oldest (got %q)", ErrInvalid, q.Order)
	}
	if q.Limit == 0 {
		q.Limit = apitype.DefaultLimit
	}
	if q.Limit < 0 || q.Limit > MaxLimit {
		return fmt.Errorf("%w: limit must be 1..%d", ErrInvalid, MaxLimit)
	}
	if q.Offset < 0 || q.Offset > MaxOffset {
		return fmt.Errorf("%w: offset must be 0..%d", ErrInvalid, MaxOffset)
	}
	q.File = strings.TrimSpace(q.File)
	if strings.HasSuffix(q.File, "/") {
		return fmt.Errorf("%w: file must name a file, not a directory (got %q)", ErrInvalid, q.File)
	}
	if q.Since != 0 && q.Until != 0 && q.Until <= q.Since {
		return fmt.Errorf("%w: until must be after since", ErrInvalid)
	}
	var types []string
	for _, t := range q.ObsTypes {
		for _, p := range strings.Split(t, ",") {
			if p = strings.TrimSpace(p); p != "" {
				types = append(types, p)
			}
		}
	}
	q.ObsTypes = types
	return normalizeMode(q)
}

// Config configures a Searcher.
type Config struct {
	// Window is the candidate window per kind (default DefaultWindow).
	Window int
	// RareLimit is how many rows a term may match and still be ranked by bm25 (default
	// DefaultRareLimit); more frequent terms only filter.
	RareLimit int
}

// Index is what a Searcher reads: the full-text indexes and the record rows behind them
// (the replica's read side, which alone knows the schema). The Searcher decides what to ask
// — which terms rank, which only filter, how deep to look — and ranks the answers. Kinds
// are apitype.KindObservation, KindSummary and KindPrompt.
type Index interface {
	CountMatches(ctx context.Context, kind, match string, max int) (int, error)
	ListRecords(ctx context.Context, kind string, f store.SearchFilter, oldest bool, limit int) ([]store.IndexHit, error)
	WindowMatches(ctx context.Context, kind string, q store.WindowQuery) ([]store.IndexHit, error)
	WindowTitles(ctx context.Context, kind string, q store.WindowQuery, words []string, bonus float64) ([]store.IndexHit, error)
	BestMatches(ctx context.Context, kind, match string, f store.SearchFilter, limit int) ([]store.IndexHit, error)
	HitsByID(ctx context.Context, kind string, ids []string, f store.SearchFilter) ([]store.IndexHit, error)
	RecordsAround(ctx context.Context, kind string, f store.SearchFilter, at int64, id string, before bool, n int) ([]store.IndexHit, error)
	HitByID(ctx context.Context, kind, id string) (store.IndexHit, bool, error)
	LatestSummaryHit(ctx context.Context, sessionID string) (store.IndexHit, bool, error)
	SessionStart(ctx context.Context, id string) (int64, bool, error)
}

// Searcher runs queries over an Index. Safe for concurrent use.
type Searcher struct {
	idx       Index
	window    int
	rareLimit int

	vec atomic.Pointer[vectorsBox] // the optional vector side (hybrid.go)
}

// Close releases nothing today (the Index owns its prepared statements) and is idempotent;
// the Searcher stays usable.
func (s *Searcher) Close() error { return nil }

// New returns a Searcher over idx (a *replica.Replica).
func New(idx Index, cfg Config) *Searcher {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.RareLimit <= 0 {
		cfg.RareLimit = DefaultRareLimit
	}
	return &Searcher{idx: idx, window: cfg.Window, rareLimit: cfg.RareLimit}
}

// filter is q's filters as the Index takes them: search shows current records only (a
// superseded one is reached by get or timeline).
func filter(q *Query) store.SearchFilter {
	return store.SearchFilter{Project: q.Project, Since: q.Since, Until: q.Until, Device: q.Device,
		Platform: q.Platform, Types: q.ObsTypes, File: q.File, Current: true}
}

// indexOrder is q's order as a window read takes it.
func indexOrder(order string) store.Order {
	switch order {
	case OrderNewest:
		return store.Newest
	case OrderOldest:
		return store.Oldest
	}
	return store.ByScore
}

// hit is what the index shows of h, on one line.
func hit(kind string, h store.IndexHit) apitype.Hit {
	return apitype.Hit{Kind: kind, ID: h.ID, Time: h.Time, Type: h.Type, Title: oneLine(h.Title), Project: h.Project,
		SessionID: h.SessionID, Origin: h.Origin, Device: h.Device, Score: h.Score}
}

// toHits converts an index read's answer (nil stays nil).
func toHits(kind string, in []store.IndexHit) []apitype.Hit {
	if len(in) == 0 {
		return nil
	}
	out := make([]apitype.Hit, len(in))
	for i, h := range in {
		out[i] = hit(kind, h)
	}
	return out
}

func (q *Query) kinds() []string {
	switch {
	case q.Type == TypeObservations || (q.Type == TypeAll && (len(q.ObsTypes) > 0 || q.File != "")):
		return []string{apitype.KindObservation}
	case q.Type == TypeSessions:
		return []string{apitype.KindSummary}
	case q.Type == TypePrompts:
		return []string{apitype.KindPrompt}
	}
	return []string{apitype.KindObservation, apitype.KindSummary, apitype.KindPrompt}
}

// Search returns the compact index for q.
func (s *Searcher) Search(ctx context.Context, q Query) (apitype.Results, error) {
	if err := q.Normalize(); err != nil {
		return apitype.Results{}, err
	}
	res := apitype.Results{Query: q.Text, Hits: []apitype.Hit{}}
	need := q.Offset + q.Limit
	if q.Text == "" {
		res.Mode = "recent"
		if q.Order == OrderRelevance {
			q.Order = OrderNewest
		}
		hits, err := s.collect(ctx, &q, nil, need)
		if err != nil {
			return apitype.Results{}, err
		}
		res.Hits = page(hits, q.Offset, q.Limit)
		return res, nil
	}
	mode, vec, err := s.resolveMode(&q)
	if err != nil {
		return apitype.Results{}, err
	}
	if mode != ModeFTS {
		return s.searchVectors(ctx, q, mode, vec)
	}
	res.Ranking = ModeFTS
	e := Parse(q.Text)
	if q.Prefix {
		e = ParseTyping(q.Text)
	}
	if e.Empty() {
		res.Mode = "none"
		return res, nil
	}
	counts := map[string]int{}
	if q.Order == OrderRelevance {
		res.Mode = "any"
		hits, err := s.collectRanked(ctx, &q, ranked(e, counts), need)
		if err != nil {
			return apitype.Results{}, err
		}
		res.Hits = page(hits, q.Offset, q.Limit)
		return res, nil
	}
	res.Mode = "all"
	hits, err := s.collect(ctx, &q, allTerms(e, counts), need)
	if err != nil {
		return apitype.Results{}, err
	}
	if len(hits) < minResults && e.Terms() > 1 {
		more, err := s.collect(ctx, &q, anyTerm(e, counts), need)
		if err != nil {
			return apitype.Results{}, err
		}
		seen := make(map[string]bool, len(hits))
		for _, h := range hits {
			seen[h.ID] = true
		}
		for _, h := range more {
			if !seen[h.ID] {
				hits = append(hits, h)
			}
		}
		if len(hits) > 0 && len(more) > 0 {
			res.Mode = "all+any"
		}
	}
	res.Hits = page(hits, q.Offset, q.Limit)
	return res, nil
}

func page(hits []apitype.Hit, offset, limit int) []apitype.Hit {
	if offset >= len(hits) {
		return []apitype.Hit{}
	}
	hits = hits[offset:]
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}

// collect runs match (empty: no text) over every kind q asks for and merges the hits in
// q's order, keeping the first n.
func (s *Searcher) collect(ctx context.Context, q *Query, fq *ftsQuery, n int) ([]apitype.Hit, error) {
	var all []apitype.Hit
	for _, k := range q.kinds() {
		hits, err := s.searchKind(ctx, k, q, fq, n)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", k, err)
		}
		all = append(all, hits...)
	}
	sortHits(all, q.Order, fq != nil)
	if len(all) > n {
		all = all[:n]
	}
	return all, nil
}

func sortHits(h []apitype.Hit, order string, scored bool) {
	sort.SliceStable(h, func(i, j int) bool {
		a, b := h[i], h[j]
		switch {
		case order == OrderRelevance && scored && a.Score != b.Score:
			return a.Score < b.Score
		case order == OrderOldest:
			if a.Time != b.Time {
				return a.Time < b.Time
			}
			return a.ID < b.ID
		}
		if a.Time != b.Time {
			return a.Time > b.Time
		}
		return a.ID > b.ID
	})
}

// ftsQuery is a parsed query prepared for one pass (all terms, or the any-term fallback).
type ftsQuery struct {
	match string
	terms []string
	words []string
	// lastBoth/lastPlain: see Expr.
	lastBoth, lastPlain string
	// counts caches term match counts per table across the passes of one Search.
	counts map[string]int
	// and: match is one AND clause of terms (the frequent ones may then filter only).
	and bool
	// any: match is the OR of terms.
	any bool
	// ident: the identifier terms, weighed identWeight times when ranked.
	ident map[string]bool
	// syn: the developer-vocabulary terms, weighed synonymWeight against the others.
	syn map[string]bool
}

func allTerms(e Expr, counts map[string]int) *ftsQuery {
	return &ftsQuery{match: e.Match(), terms: e.terms, words: e.words, and: len(e.clauses) == 1, lastBoth: e.lastBoth, lastPlain: e.lastPlain, counts: counts}
}

func anyTerm(e Expr, counts map[string]int) *ftsQuery {
	return &ftsQuery{match: e.Any(), terms: e.terms, words: e.words, any: true, lastBoth: e.lastBoth, lastPlain: e.lastPlain, counts: counts}
}

// count returns how many records of kind match term, counting no further than rareLimit+1.
func (s *Searcher) count(ctx context.Context, kind string, fq *ftsQuery, term string) (int, error) {
	key := kind + "\x00" + term
	if c, ok := fq.counts[key]; ok {
		return c, nil
	}
	c, err := s.idx.CountMatches(ctx, kind, term, s.rareLimit+1)
	if err == nil && fq.counts != nil {
		fq.counts[key] = c
	}
	return c, err
}

func (s *Searcher) searchKind(ctx context.Context, kind string, q *Query, fq *ftsQuery, n int) ([]apitype.Hit, error) {
	if fq == nil {
		found, err := s.idx.ListRecords(ctx, kind, filter(q), q.Order == OrderOldest, n)
		return toHits(kind, found), err
	}
	window := max(s.window, n)
	// Selective terms are ranked by bm25; a term found in more than rareLimit rows carries
	// almost no information (bm25's IDF goes to zero) yet costs a scan of its whole
	// doclist to weigh, so it only filters.
	terms, match, err := s.typedTerms(ctx, kind, fq)
	if err != nil {
		return nil, err
	}
	var rare []string
	for _, t := range terms {
		c, err := s.count(ctx, kind, fq, t) // the last word's count is cached from above
		if err != nil {
			return nil, err
		}
		if c == 0 && fq.and {
			return nil, nil // a term found nowhere: no row has every term
		}
		if c <= s.rareLimit {
			rare = append(rare, t)
		}
	}
	rank, also := match, ""
	switch {
	case len(rare) == len(terms) || (!fq.and && !fq.any):
	case len(rare) == 0:
		return s.recent(ctx, kind, q, match, fq.words, window, n)
	case fq.any:
		rank = strings.Join(rare, " OR ")
	default:
		rank, also = strings.Join(rare, " OR "), match
	}
	found, err := s.idx.WindowMatches(ctx, kind, store.WindowQuery{Match: rank, Also: also, Filter: filter(q),
		Window: window, Order: indexOrder(q.Order), Limit: n})
	return toHits(kind, found), err
}

// typedTerms returns fq's terms and match expression, with the as-you-type prefix form
// of the last word dropped when the word alone is frequent: a word found this often was
// typed in full, its matches fill the first pages anyway, and the prefix expansion is
// costly (a prefix query reads the whole doclist of every expansion, and bm25 weighs it
// twice).
func (s *Searcher) typedTerms(ctx context.Context, kind string, fq *ftsQuery) ([]string, string, error) {
	if fq.lastBoth == "" {
		return fq.terms, fq.match, nil
	}
	c, err := s.count(ctx, kind, fq, fq.lastPlain)
	if err != nil || c < expandBelow {
		return fq.terms, fq.match, err
	}
	terms := make([]string, len(fq.terms))
	for i, t := range fq.terms {
		if t == fq.lastBoth {
			t = fq.lastPlain
		}
		terms[i] = t
	}
	return terms, strings.ReplaceAll(fq.match, fq.lastBoth, fq.lastPlain), nil
}

// recent answers a query made only of frequent terms: among the newest matches (the
// window), those with the query's words in their title come first, then by time.
func (s *Searcher) recent(ctx context.Context, kind string, q *Query, match string, words []string, window, n int) ([]apitype.Hit, error) {
	var title []string
	if q.Order == OrderRelevance && kind == apitype.KindObservation {
		title = words
	}
	found, err := s.idx.WindowTitles(ctx, kind, store.WindowQuery{Match: match, Filter: filter(q), Window: window,
		Order: indexOrder(q.Order), Limit: n}, title, titleBonus)
	return toHits(kind, found), err
}

// titleBonus scores each query word found in a title when every term is frequent: small
// next to any bm25 score of a selective term, so such hits rank after real matches.
const titleBonus = 1e-3

// oneLine keeps an index row on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

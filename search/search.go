package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/replica"
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

// Searcher runs queries over a replica's read pool. Safe for concurrent use.
type Searcher struct {
	db        *sql.DB
	window    int
	rareLimit int

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // prepared once: parsing the FTS queries costs more than running them

	vec atomic.Pointer[vectorsBox] // the optional vector side (hybrid.go)
}

// maxStmts bounds the statement cache; the query shapes are few (filters × kinds).
const maxStmts = 512

// query runs q through a cached prepared statement.
func (s *Searcher) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return s.db.QueryContext(ctx, q, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (s *Searcher) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := s.stmt(ctx, q)
	if err != nil || st == nil {
		return s.db.QueryRowContext(ctx, q, args...) // on error: reports the same error on Scan
	}
	return st.QueryRowContext(ctx, args...)
}

// stmt returns the cached statement for q, preparing it on first use, or nil once the
// cache is full: the rare shapes beyond it run unprepared. Nothing is evicted, since
// another goroutine may be about to run a statement taken from the cache.
func (s *Searcher) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.stmts[q]; ok {
		return st, nil
	}
	if len(s.stmts) >= maxStmts {
		return nil, nil
	}
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	s.stmts[q] = st
	return st, nil
}

// Close releases the prepared statements. It is idempotent; the Searcher stays usable.
func (s *Searcher) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for k, st := range s.stmts {
		errs = append(errs, st.Close())
		delete(s.stmts, k)
	}
	return errors.Join(errs...)
}

// New returns a Searcher over db (replica.ReadDB()).
func New(db *sql.DB, cfg Config) *Searcher {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.RareLimit <= 0 {
		cfg.RareLimit = DefaultRareLimit
	}
	return &Searcher{db: db, window: cfg.Window, rareLimit: cfg.RareLimit, stmts: map[string]*sql.Stmt{}}
}

// kindSpec describes how to search one table.
type kindSpec struct {
	kind, table, fts, weights string
	typeExpr, titleExpr       string
}

// hitCols is the select list scanHits reads (before the score), with t the kind's table
// and d its LEFT JOINed devices row.
func (k kindSpec) hitCols() string {
	return "t.id, t.created_at, " + k.typeExpr + ", " + k.titleExpr + ", t.project, t.session_id, t.origin, COALESCE(d.name, '')"
}

var kinds = map[string]kindSpec{
	apitype.KindObservation: {apitype.KindObservation, "observations", "observations_fts",
		// title, subtitle, narrative, facts, concepts, files: the title lifts a hit, it
		// does not decide (at 10 a title word outweighed a rare word of the narrative)
		"2.0, 1.0, 1.0, 1.0, 1.0, 1.0", "t.type", "t.title"},
	apitype.KindSummary: {apitype.KindSummary, "summaries", "summaries_fts",
		// request, investigated, learned, completed, next_steps, notes
		"5.0, 1.0, 3.0, 3.0, 1.0, 1.0", "'session'",
		"COALESCE(NULLIF(t.request, ''), NULLIF(t.completed, ''), substr(t.learned, 1, 120))"},
	apitype.KindPrompt: {apitype.KindPrompt, "prompts", "prompts_fts", "1.0", "'prompt'", "substr(t.text, 1, 120)"},
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
		hits, err := s.searchKind(ctx, kinds[k], q, fq, n)
		if err != nil {
			return nil, fmt.Errorf("search %s: %w", kinds[k].table, err)
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

// filters renders q's filters over table alias t.
func filters(k kindSpec, q *Query) (string, []any) {
	var where []string
	var args []any
	if q.Project != "" {
		where = append(where, "t.project = ?")
		args = append(args, q.Project)
	}
	if q.Since != 0 {
		where = append(where, "t.created_at >= ?")
		args = append(args, q.Since)
	}
	if q.Until != 0 {
		where = append(where, "t.created_at < ?")
		args = append(args, q.Until)
	}
	if q.Device != "" {
		where = append(where, "(t.origin = ? OR t.origin IN (SELECT origin FROM devices WHERE name = ?))")
		args = append(args, q.Device, q.Device)
	}
	if q.Platform != "" {
		where = append(where, "t.session_id IN (SELECT id FROM sessions WHERE platform = ?)")
		args = append(args, q.Platform)
	}
	if k.kind == apitype.KindObservation && len(q.ObsTypes) > 0 {
		where = append(where, "t.type IN ("+strings.TrimSuffix(strings.Repeat("?,", len(q.ObsTypes)), ",")+")")
		for _, t := range q.ObsTypes {
			args = append(args, t)
		}
	}
	if q.File != "" {
		if k.kind != apitype.KindObservation {
			where = append(where, "0") // only observations read or modify files
		} else {
			// The path as stored (absolute or relative to the project), or any path it is
			// the end of at a '/': a project-relative path or a basename.
			file := strings.TrimPrefix(q.File, "./")
			suffix := "/" + file
			where = append(where, "t.rowid IN (SELECT obs_rowid FROM observation_files WHERE name = ? AND (path = ? OR substr(path, ?) = ?))")
			args = append(args, replica.FileName(file), file, -utf8.RuneCountInString(suffix), suffix)
		}
	}
	if len(where) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(where, " AND "), args
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
}

func allTerms(e Expr, counts map[string]int) *ftsQuery {
	return &ftsQuery{match: e.Match(), terms: e.terms, words: e.words, and: len(e.clauses) == 1, lastBoth: e.lastBoth, lastPlain: e.lastPlain, counts: counts}
}

func anyTerm(e Expr, counts map[string]int) *ftsQuery {
	return &ftsQuery{match: e.Any(), terms: e.terms, words: e.words, any: true, lastBoth: e.lastBoth, lastPlain: e.lastPlain, counts: counts}
}

// count returns how many rows of k match term, counting no further than rareLimit+1.
func (s *Searcher) count(ctx context.Context, k kindSpec, fq *ftsQuery, term string) (int, error) {
	key := k.table + "\x00" + term
	if c, ok := fq.counts[key]; ok {
		return c, nil
	}
	var c int
	err := s.queryRow(ctx, "SELECT COUNT(*) FROM (SELECT rowid FROM "+k.fts+" WHERE "+k.fts+" MATCH ? LIMIT ?)", term, s.rareLimit+1).Scan(&c)
	if err == nil && fq.counts != nil {
		fq.counts[key] = c
	}
	return c, err
}

func (s *Searcher) searchKind(ctx context.Context, k kindSpec, q *Query, fq *ftsQuery, n int) ([]apitype.Hit, error) {
	where, args := filters(k, q)
	cols := k.hitCols()
	dir := "DESC"
	if q.Order == OrderOldest {
		dir = "ASC"
	}
	if fq == nil {
		query := "SELECT " + cols + ", 0 FROM " + k.table + " t LEFT JOIN devices d ON d.origin = t.origin WHERE 1" + where +
			" ORDER BY t.created_at " + dir + ", t.id " + dir + " LIMIT ?"
		return s.scanHits(ctx, k, query, append(args, n))
	}
	window := max(s.window, n)
	// Selective terms are ranked by bm25; a term found in more than rareLimit rows carries
	// almost no information (bm25's IDF goes to zero) yet costs a scan of its whole
	// doclist to weigh, so it only filters.
	terms, match, err := s.typedTerms(ctx, k, fq)
	if err != nil {
		return nil, err
	}
	var rare []string
	for _, t := range terms {
		c, err := s.count(ctx, k, fq, t) // the last word's count is cached from above
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
	rank, filter := match, ""
	switch {
	case len(rare) == len(terms) || (!fq.and && !fq.any):
	case len(rare) == 0:
		return s.recent(ctx, k, q, match, fq.words, where, args, dir, window, n)
	case fq.any:
		rank = strings.Join(rare, " OR ")
	default:
		rank, filter = strings.Join(rare, " OR "), match
	}
	inner := "SELECT " + k.fts + ".rowid AS rid, bm25(" + k.fts + ", " + k.weights + ") AS score FROM " +
		k.fts + " JOIN " + k.table + " t ON t.rowid = " + k.fts + ".rowid WHERE " + k.fts + " MATCH ?"
	iargs := []any{rank}
	if filter != "" {
		// The unary + keeps SQLite from turning the IN into one FTS lookup per rowid.
		inner += " AND +" + k.fts + ".rowid IN (SELECT rowid FROM " + k.fts + " WHERE " + k.fts + " MATCH ?)"
		iargs = append(iargs, filter)
	}
	order := "c.score, t.created_at DESC, t.id DESC"
	switch q.Order {
	case OrderNewest:
		order = "t.created_at DESC, t.id DESC"
	case OrderOldest:
		order = "t.created_at ASC, t.id ASC"
	}
	// The inner query walks the doclist in rowid order with the filters applied and stops
	// after the window; bm25 is computed only for those rows.
	query := "SELECT " + cols + ", c.score FROM (" + inner + where + " ORDER BY " + k.fts + ".rowid " + dir +
		" LIMIT ?) c JOIN " + k.table + " t ON t.rowid = c.rid LEFT JOIN devices d ON d.origin = t.origin ORDER BY " + order + " LIMIT ?"
	all := append(append(iargs, args...), window, n)
	return s.scanHits(ctx, k, query, all)
}

// typedTerms returns fq's terms and match expression, with the as-you-type prefix form
// of the last word dropped when the word alone is frequent: a word found this often was
// typed in full, its matches fill the first pages anyway, and the prefix expansion is
// costly (a prefix query reads the whole doclist of every expansion, and bm25 weighs it
// twice).
func (s *Searcher) typedTerms(ctx context.Context, k kindSpec, fq *ftsQuery) ([]string, string, error) {
	if fq.lastBoth == "" {
		return fq.terms, fq.match, nil
	}
	c, err := s.count(ctx, k, fq, fq.lastPlain)
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
func (s *Searcher) recent(ctx context.Context, k kindSpec, q *Query, match string, words []string, where string, args []any, dir string, window, n int) ([]apitype.Hit, error) {
	bonus, bargs := "0", []any{}
	if q.Order == OrderRelevance && k.kind == apitype.KindObservation {
		var parts []string
		for _, w := range words {
			if w != "" {
				parts = append(parts, "(instr(lower(t.title), ?) > 0)")
				bargs = append(bargs, w)
			}
		}
		if len(parts) > 0 {
			bonus = "-" + strconv.FormatFloat(titleBonus, 'g', -1, 64) + " * (" + strings.Join(parts, " + ") + ")"
		}
	}
	query := "SELECT " + k.hitCols() + ", " + bonus + " AS score FROM (SELECT " + k.fts + ".rowid AS rid FROM " + k.fts + " JOIN " + k.table + " t ON t.rowid = " +
		k.fts + ".rowid WHERE " + k.fts + " MATCH ?" + where + " ORDER BY " + k.fts + ".rowid " + dir + " LIMIT ?) c JOIN " + k.table +
		" t ON t.rowid = c.rid LEFT JOIN devices d ON d.origin = t.origin ORDER BY score, t.created_at " + dir + ", t.id " + dir + " LIMIT ?"
	all := append(append(append(bargs, match), args...), window, n)
	return s.scanHits(ctx, k, query, all)
}

// titleBonus scores each query word found in a title when every term is frequent: small
// next to any bm25 score of a selective term, so such hits rank after real matches.
const titleBonus = 1e-3

func (s *Searcher) scanHits(ctx context.Context, k kindSpec, query string, args []any) ([]apitype.Hit, error) {
	rows, err := s.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []apitype.Hit
	for rows.Next() {
		h := apitype.Hit{Kind: k.kind}
		if err := rows.Scan(&h.ID, &h.Time, &h.Type, &h.Title, &h.Project, &h.SessionID, &h.Origin, &h.Device, &h.Score); err != nil {
			return nil, err
		}
		h.Title = oneLine(h.Title)
		out = append(out, h)
	}
	return out, rows.Err()
}

// oneLine keeps an index row on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/memnode/memnode/memory"
)

// The index reads: what search asks of the full-text indexes and the record rows behind
// them. The caller decides what to ask (which terms rank, which only filter, how deep to
// look); these methods know how the answer is stored. Kinds are OpObservation, OpSummary
// and OpPrompt.

// indexKind is how one record kind is stored and indexed.
type indexKind struct {
	table, fts, weights string
	typeExpr, titleExpr string
}

func indexKindOf(kind string) (indexKind, error) {
	switch kind {
	case store.OpObservation:
		// title, subtitle, narrative, facts, concepts, files: the title lifts a hit, it
		// does not decide (at 10 a title word outweighed a rare word of the narrative)
		return indexKind{"observations", "observations_fts", "2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0", "t.type", "t.title"}, nil
	case store.OpSummary:
		// request, investigated, learned, completed, next_steps, notes
		return indexKind{"summaries", "summaries_fts", "5.0, 1.0, 3.0, 3.0, 1.0, 1.0, 0.0", "'session'",
			"COALESCE(NULLIF(t.request, ''), NULLIF(t.completed, ''), substr(t.learned, 1, 120))"}, nil
	case store.OpPrompt:
		return indexKind{"prompts", "prompts_fts", "1.0, 0.0", "'prompt'", "substr(t.text, 1, 120)"}, nil
	}
	return indexKind{}, fmt.Errorf("index read: unknown record kind %q", kind)
}

// The last column of every full-text index, project_key (bm25 weight 0.0 in each kind's
// weights above), holds the record's projectKey (migration 0013).

// textOnly is the FTS5 expression match over the indexed text alone: the project_key
// column is excluded, so no term of a query (a prefix of digits, say) matches a key.
func textOnly(match string) string { return "- project_key : (" + match + ")" }

// inProject is match restricted by the index to the records of project (all with project
// ""): the project's key is one more term of the same MATCH, so FTS5 intersects the
// doclists — a read walks the project's matches only, not every match of a common word
// with a table lookup each. The key's weight is 0, so bm25 scores are those of match.
// Keys may collide: the reads keep their check of the project in the table.
func inProject(match, project string) string {
	if project == "" {
		return textOnly(match)
	}
	return "(" + textOnly(match) + ") AND project_key : \"" + projectKey(project) + "\""
}

// hitCols is the select list scanHits reads (before the score), with t the kind's table
// and d its LEFT JOINed devices row.
func (k indexKind) hitCols() string {
	return "t.id, t.created_at, " + k.typeExpr + ", " + k.titleExpr + ", t.project, t.session_id, t.origin, COALESCE(d.name, '')"
}

// matches is the FROM clause of a read over the full-text index: the index alone, or, when
// where filters on the records' columns, joined with the kind's table as t. Without a
// filter the join would cost one table lookup per match (a third of a bm25 read at 10k)
// for rows the outer query looks up anyway.
func (k indexKind) matches(where string) string {
	if where == "" {
		return k.fts
	}
	return k.fts + " JOIN " + k.table + " t ON t.rowid = " + k.fts + ".rowid"
}

// where renders f over table alias t, for kind.
func (k indexKind) where(kind string, f store.SearchFilter) (string, []any) {
	var where []string
	var args []any
	if f.Project != "" {
		where = append(where, "t.project = ?")
		args = append(args, f.Project)
	}
	if f.Since != 0 {
		where = append(where, "t.created_at >= ?")
		args = append(args, f.Since)
	}
	if f.Until != 0 {
		where = append(where, "t.created_at < ?")
		args = append(args, f.Until)
	}
	if f.Device != "" {
		where = append(where, "(t.origin = ? OR t.origin IN (SELECT origin FROM devices WHERE name = ?))")
		args = append(args, f.Device, f.Device)
	}
	if f.Platform != "" {
		where = append(where, "t.session_id IN (SELECT id FROM sessions WHERE platform = ?)")
		args = append(args, memory.PlatformName(f.Platform))
	}
	if kind == store.OpObservation && len(f.Types) > 0 {
		where = append(where, "t.type IN ("+placeholders(len(f.Types))+")")
		for _, t := range f.Types {
			args = append(args, t)
		}
	}
	if f.Current && kind == store.OpObservation {
		where = append(where, currentObservation("t.id"))
	}
	if f.File != "" {
		if kind != store.OpObservation {
			where = append(where, "0")
		} else {
			file := strings.TrimPrefix(f.File, "./")
			suffix := "/" + file
			where = append(where, "t.rowid IN (SELECT f.obs_rowid FROM file_paths p JOIN observation_files f ON f.path_id = p.id WHERE p.name = ? AND (p.path = ? OR substr(p.path, ?) = ?))")
			args = append(args, FileName(file), file, -utf8.RuneCountInString(suffix), suffix)
		}
	}
	if len(where) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(where, " AND "), args
}

// CountMatches returns how many records of kind match the FTS5 expression match, counting
// no further than max. An answer is kept until the next commit (matchCounts).
func (r *Replica) CountMatches(ctx context.Context, kind, match string, max int) (int, error) {
	k, err := indexKindOf(kind)
	if err != nil {
		return 0, err
	}
	key := countKey{kind: kind, match: match, max: max}
	// The commit count is read before the index: a commit after this point makes the
	// answer stale, and its count no longer matches the entry's.
	at := r.commits.Load()
	if c, ok := r.counts.get(key, at); ok {
		return c, nil
	}
	var c int
	err = r.reads.queryRow(ctx, "SELECT COUNT(*) FROM (SELECT rowid FROM "+k.fts+" WHERE "+k.fts+" MATCH ? LIMIT ?)", textOnly(match), max).Scan(&c)
	if err != nil {
		return 0, err
	}
	r.counts.put(key, at, c)
	return c, nil
}

// maxMatchCounts bounds matchCounts: the terms of the searches between two commits.
const maxMatchCounts = 4096

type countKey struct {
	kind, match string
	max         int
}

// matchCounts keeps CountMatches' answers for the commit count they were read at. A search
// counts each of its terms in each kind before it reads the index (which terms are rare
// enough to rank), and the searches between two commits — a person typing in the viewer,
// an agent's search → timeline → search — ask for the same terms again: their counts cost a
// third of a search. Every write goes through runTx, which counts its commit before it
// returns or publishes, so an answer is only ever served for the database it was read
// from. The zero value is ready.
type matchCounts struct {
	mu sync.Mutex
	at uint64 // the commit count m's answers were read at
	m  map[countKey]int
}

func (mc *matchCounts) get(k countKey, at uint64) (int, bool) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.at != at {
		return 0, false
	}
	c, ok := mc.m[k]
	return c, ok
}

// put keeps c as k's answer read at commit count at; an answer older than those kept is
// dropped, a newer one replaces them all.
func (mc *matchCounts) put(k countKey, at uint64, c int) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	switch {
	case at < mc.at:
		return
	case at > mc.at || mc.m == nil || len(mc.m) >= maxMatchCounts:
		mc.at, mc.m = at, make(map[countKey]int)
	}
	mc.m[k] = c
}

// ListRecords returns the newest records of kind that pass f (the oldest with oldest set).
func (r *Replica) ListRecords(ctx context.Context, kind string, f store.SearchFilter, oldest bool, limit int) ([]store.IndexHit, error) {
	k, err := indexKindOf(kind)
	if err != nil {
		return nil, err
	}
	where, args := k.where(kind, f)
	dir := direction(oldest)
	query := "SELECT " + k.hitCols() + ", 0 FROM " + k.table + " t LEFT JOIN devices d ON d.origin = t.origin WHERE 1" + where +
		" ORDER BY t.created_at " + dir + ", t.id " + dir + " LIMIT ?"
	return r.scanHits(ctx, query, append(args, limit))
}

func direction(oldest bool) string {
	if oldest {
		return "ASC"
	}
	return "DESC"
}

// WindowMatches scores the window of q by bm25 (with the kind's column weights).
func (r *Replica) WindowMatches(ctx context.Context, kind string, q store.WindowQuery) ([]store.IndexHit, error) {
	k, err := indexKindOf(kind)
	if err != nil {
		return nil, err
	}
	where, args := k.where(kind, q.Filter)
	dir := direction(q.Order == store.Oldest)
	inner := "SELECT " + k.fts + ".rowid AS rid, bm25(" + k.fts + ", " + k.weights + ") AS score FROM " +
		k.matches(where) + " WHERE " + k.fts + " MATCH ?"
	iargs := []any{inProject(q.Match, q.Filter.Project)}
	if q.Also != "" {
		// The unary + keeps SQLite from turning the IN into one FTS lookup per rowid.
		inner += " AND +" + k.fts + ".rowid IN (SELECT rowid FROM " + k.fts + " WHERE " + k.fts + " MATCH ?)"
		iargs = append(iargs, textOnly(q.Also))
	}
	order := "c.score, t.created_at DESC, t.id DESC"
	switch q.Order {
	case store.Newest:
		order = "t.created_at DESC, t.id DESC"
	case store.Oldest:
		order = "t.created_at ASC, t.id ASC"
	}
	// The inner query walks the doclist in rowid order with the filters applied and stops
	// after the window; bm25 is computed only for those rows.
	query := "SELECT " + k.hitCols() + ", c.score FROM (" + inner + where + " ORDER BY " + k.fts + ".rowid " + dir +
		" LIMIT ?) c JOIN " + k.table + " t ON t.rowid = c.rid LEFT JOIN devices d ON d.origin = t.origin ORDER BY " + order + " LIMIT ?"
	return r.scanHits(ctx, query, append(append(iargs, args...), q.Window, q.Limit))
}

// WindowTitles orders the window of q without bm25: each of words (lower case) found in a
// record's title scores -bonus, then time breaks ties in the window's direction. It answers
// a query made only of frequent terms, whose bm25 weighs nothing yet would read every
// doclist. q.Also is not used.
func (r *Replica) WindowTitles(ctx context.Context, kind string, q store.WindowQuery, words []string, bonus float64) ([]store.IndexHit, error) {
	k, err := indexKindOf(kind)
	if err != nil {
		return nil, err
	}
	where, args := k.where(kind, q.Filter)
	dir := direction(q.Order == store.Oldest)
	score, bargs := "0", []any{}
	var parts []string
	for _, w := range words {
		if w != "" {
			parts = append(parts, "(instr(lower(t.title), ?) > 0)")
			bargs = append(bargs, w)
		}
	}
	if len(parts) > 0 {
		score = "-" + strconv.FormatFloat(bonus, 'g', -1, 64) + " * (" + strings.Join(parts, " + ") + ")"
	}
	query := "SELECT " + k.hitCols() + ", " + score + " AS score FROM (SELECT " + k.fts + ".rowid AS rid FROM " + k.matches(where) +
		" WHERE " + k.fts + " MATCH ?" + where + " ORDER BY " + k.fts + ".rowid " + dir + " LIMIT ?) c JOIN " + k.table +
		" t ON t.rowid = c.rid LEFT JOIN devices d ON d.origin = t.origin ORDER BY score, t.created_at " + dir + ", t.id " + dir + " LIMIT ?"
	return r.scanHits(ctx, query, append(append(append(bargs, inProject(q.Match, q.Filter.Project)), args...), q.Window, q.Limit))
}

// BestMatches returns the limit records of kind that pass f with the best bm25 score for
// match, each with its Pos, in no particular order.
func (r *Replica) BestMatches(ctx context.Context, kind, match string, f store.SearchFilter, limit int) ([]store.IndexHit, error) {
	k, err := indexKindOf(kind)
	if err != nil {
		return nil, err
	}
	where, args := k.where(kind, f)
	query := "SELECT " + k.hitCols() + ", c.score, c.rid FROM (SELECT " + k.fts + ".rowid AS rid, bm25(" + k.fts + ", " + k.weights +
		") AS score FROM " + k.matches(where) + " WHERE " + k.fts + " MATCH ?" + where +
		" ORDER BY score LIMIT ?) c JOIN " + k.table + " t ON t.rowid = c.rid LEFT JOIN devices d ON d.origin = t.origin"
	return r.scanHitsPos(ctx, query, append(append([]any{inProject(match, f.Project)}, args...), limit), true)
}

// idChunk is how many IDs one HitsByID statement asks for: a shorter list is padded, so
// every call runs the same prepared statement.
const idChunk = 100

// HitsByID returns the records of kind among ids that pass f, in no particular order; IDs
// that name nothing (never stored, or forgotten) are left out.
func (r *Replica) HitsByID(ctx context.Context, kind string, ids []string, f store.SearchFilter) ([]store.IndexHit, error) {
	k, err := indexKindOf(kind)
	if err != nil {
		return nil, err
	}
	where, fargs := k.where(kind, f)
	// CROSS JOIN fixes the loop order: look the IDs up by the unique index first, then
	// filter. Left to itself SQLite may walk a filter's index (a whole project) instead.
	query := "SELECT " + k.hitCols() + ", 0 FROM " + k.table + " c CROSS JOIN " + k.table + " t ON t.rowid = c.rowid" +
		" LEFT JOIN devices d ON d.origin = t.origin WHERE c.id IN (" + placeholders(idChunk) + ")" + where
	var out []store.IndexHit
	for len(ids) > 0 {
		chunk := ids[:min(idChunk, len(ids))]
		ids = ids[len(chunk):]
		args := make([]any, 0, idChunk+len(fargs))
		for _, id := range chunk {
			args = append(args, id)
		}
		for len(args) < idChunk {
			args = append(args, "") // no record has an empty ID
		}
		hits, err := r.scanHits(ctx, query, append(args, fargs...))
		if err != nil {
			return nil, err
		}
		out = append(out, hits...)
	}
	return out, nil
}

// RecordsAround returns up to n records of kind that pass f, strictly before (or after)
// the point (at, id), nearest first: records order by (time, id), and a time point (id "")
// sits before every record of its millisecond.
//
// It is two reads, each a range of the kind's time index (project, created_at when f names
// a project, else created_at) that stops after n rows: the rest of the anchor's millisecond
// (by ID), then the times before (or after) it. One read with the condition
// "created_at < ? OR (created_at = ? AND id < ?)" cost a walk of the whole index with a
// table lookup per row (942 ms at 1M observations): SQLite cannot bound a range by an OR.
func (r *Replica) RecordsAround(ctx context.Context, kind string, f store.SearchFilter, at int64, id string, before bool, n int) ([]store.IndexHit, error) {
	if n <= 0 {
		return nil, nil
	}
	k, err := indexKindOf(kind)
	if err != nil {
		return nil, err
	}
	where, fargs := k.where(kind, f)
	cmp, order := ">", "ASC"
	if before {
		cmp, order = "<", "DESC"
	}
	from := "SELECT " + k.hitCols() + ", 0 FROM " + k.table + " t LEFT JOIN devices d ON d.origin = t.origin WHERE "
	same := from + "t.created_at = ? AND t.id " + cmp + " ?" + where + " ORDER BY t.id " + order + " LIMIT ?"
	out, err := r.scanHits(ctx, same, append(append([]any{at, id}, fargs...), n))
	if err != nil || len(out) == n {
		return out, err
	}
	rest := from + "t.created_at " + cmp + " ?" + where + " ORDER BY t.created_at " + order + ", t.id " + order + " LIMIT ?"
	more, err := r.scanHits(ctx, rest, append(append([]any{at}, fargs...), n-len(out)))
	return append(out, more...), err
}

// HitByID returns the record of kind whose ID is id; ok is false when none has it.
func (r *Replica) HitByID(ctx context.Context, kind, id string) (store.IndexHit, bool, error) {
	return r.hitWhere(ctx, kind, "t.id = ?", id)
}

// LatestSummaryHit returns the newest summary of a session; ok is false when it has none.
func (r *Replica) LatestSummaryHit(ctx context.Context, sessionID string) (store.IndexHit, bool, error) {
	return r.hitWhere(ctx, store.OpSummary, "t.session_id = ? ORDER BY t.created_at DESC LIMIT 1", sessionID)
}

func (r *Replica) hitWhere(ctx context.Context, kind, cond string, arg any) (store.IndexHit, bool, error) {
	k, err := indexKindOf(kind)
	if err != nil {
		return store.IndexHit{}, false, err
	}
	var h store.IndexHit
	err = r.reads.queryRow(ctx, "SELECT "+k.hitCols()+" FROM "+k.table+" t LEFT JOIN devices d ON d.origin = t.origin WHERE "+cond, arg).
		Scan(&h.ID, &h.Time, &h.Type, &h.Title, &h.Project, &h.SessionID, &h.Origin, &h.Device)
	if errors.Is(err, sql.ErrNoRows) {
		return store.IndexHit{}, false, nil
	}
	if err != nil {
		return store.IndexHit{}, false, err
	}
	return h, true, nil
}

// SessionStart returns when the session id started; ok is false when it is not stored.
func (r *Replica) SessionStart(ctx context.Context, id string) (int64, bool, error) {
	var started int64
	err := r.reads.queryRow(ctx, "SELECT started_at FROM sessions WHERE id = ?", id).Scan(&started)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("session start: %w", err)
	}
	return started, true, nil
}

// scanHits runs a read whose rows are hitCols and a score.
func (r *Replica) scanHits(ctx context.Context, query string, args []any) ([]store.IndexHit, error) {
	return r.scanHitsPos(ctx, query, args, false)
}

// scanHitsPos runs a read whose rows are hitCols, a score and, with pos, the rowid.
func (r *Replica) scanHitsPos(ctx context.Context, query string, args []any, pos bool) ([]store.IndexHit, error) {
	rows, err := r.reads.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []store.IndexHit
	var h store.IndexHit // every row overwrites every field dest names
	dest := []any{&h.ID, &h.Time, &h.Type, &h.Title, &h.Project, &h.SessionID, &h.Origin, &h.Device, &h.Score}
	if pos {
		dest = append(dest, &h.Pos)
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// maxReadStmts bounds the read statement cache; the index read shapes are few (filters ×
// kinds × reads).
const maxReadStmts = 512

// readStmts caches the index reads' prepared statements on the read pool: parsing the FTS
// queries costs more than running them.
type readStmts struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	// trace, when set (by a test, before any read), sees every read: the query plan tests
	// explain the statements the request paths really run.
	trace func(q string, args []any)
}

func newReadStmts(db *sql.DB) *readStmts {
	return &readStmts{db: db, stmts: map[string]*sql.Stmt{}}
}

// uncancelled is ctx for one cached read. database/sql watches a cancellable context with
// a goroutine per statement (started, scheduled and woken for every read: a search makes
// eight or more, a context five), and every read through this cache is bounded — a point
// lookup, a window or a LIMIT, or one project's count — so a read that has started runs to
// its end. A context that has already ended is kept: the read then fails at once with its
// error.
func uncancelled(ctx context.Context) context.Context {
	if ctx.Err() != nil {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// query runs q through a cached prepared statement.
func (c *readStmts) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if c.trace != nil {
		c.trace(q, args)
	}
	ctx = uncancelled(ctx)
	st, err := c.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return c.db.QueryContext(ctx, q, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (c *readStmts) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if c.trace != nil {
		c.trace(q, args)
	}
	ctx = uncancelled(ctx)
	st, err := c.stmt(ctx, q)
	if err != nil || st == nil {
		return c.db.QueryRowContext(ctx, q, args...) // on error: reports the same error on Scan
	}
	return st.QueryRowContext(ctx, args...)
}

// inTx is the cache bound to a read transaction: its rows are the transaction's snapshot,
// and a query the transaction repeats (materialize, once per op OpsSince serves) is not
// parsed again each time.
func (c *readStmts) inTx(tx *sql.Tx) txReads { return txReads{tx: tx, c: c} }

// txReads is readStmts bound to one read transaction (inTx).
type txReads struct {
	tx *sql.Tx
	c  *readStmts
}

func (t txReads) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := t.c.stmt(ctx, q)
	if err != nil || st == nil {
		return t.tx.QueryRowContext(ctx, q, args...) // on error: reports the same error on Scan
	}
	return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
}

// stmt returns the cached statement for q, preparing it on first use, or nil once the
// cache is full: the rare shapes beyond it run unprepared. Nothing is evicted, since
// another goroutine may be about to run a statement taken from the cache.
func (c *readStmts) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[q]; ok {
		return st, nil
	}
	if len(c.stmts) >= maxReadStmts {
		return nil, nil
	}
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.stmts[q] = st
	return st, nil
}

// close releases the statements; it is idempotent.
func (c *readStmts) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for k, st := range c.stmts {
		errs = append(errs, st.Close())
		delete(c.stmts, k)
	}
	return errors.Join(errs...)
}

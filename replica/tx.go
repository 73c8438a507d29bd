package replica

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/memnode/memnode/store"
	"strconv"

	"github.com/memnode/memnode/feed"
)

// txMode is the durability of one write transaction. Modes are applied per transaction on
// the single writer connection.
type txMode struct {
	synchronous  string // FULL: fsync at commit; NORMAL: survives a crash, not power loss
	secureDelete string // ON: zero deleted content everywhere; FAST: where it costs no I/O
	// checkpoint is the WAL's size in pages past which the commit checkpoints it
	// (wal_autocheckpoint).
	checkpoint int
}

// walCheckpoint is SQLite's default wal_autocheckpoint, for every transaction but an
// import's: the WAL a forget's TRUNCATE checkpoint must copy stays small.
const walCheckpoint = 1000

// importCheckpoint lets an import's transactions grow the WAL to 2 GiB before one of
// them checkpoints it. A page an import rewrites in every transaction (FTS segments being
// merged, the last pages of each index and table) is then copied to the database once per
// checkpoint, not once per transaction; every transaction is still fsynced at its
// commit. The next commit that is not an import's checkpoints what is left. At 1M
// observations (make bench-scale, batches of 20,000) 32,768 pages (128 MiB) wrote 7,942 MiB
// for a 1,943 MiB database, 131,072 pages 6,877 MiB: the checkpoints copied a hot index
// page once per 128 MiB of WAL. With one full-text segment a batch (migration 22), to the
// node's exit (make bench-scale): 131,072 pages 6,145 MiB, 262,144 5,854, 524,288 5,624
// (2.9× the database). The price is disk and a crash: the WAL file takes up to 2 GiB while
// an import runs (it shrinks back to journal_size_limit, 64 MiB, at the next checkpoint that
// resets it), and a node killed with a full WAL takes longer to start: 5.7 s against 2.4 s
// with 1 GiB (page cache dropped; checkOpen checkpoints the WAL it finds).
const importCheckpoint = 524288

var (
	// modeDurable is for everything that appends ops: an op must never be lost after a peer
	// may have seen it, or its seq could be reused for a different change.
	modeDurable = txMode{synchronous: "FULL", secureDelete: "FAST", checkpoint: walCheckpoint}
	// modeForget also zeroes freed pages, so forgotten text is gone from the file.
	modeForget = txMode{synchronous: "FULL", secureDelete: "ON", checkpoint: walCheckpoint}
	// modeImport is an import's batch of records without tombstones.
	modeImport = txMode{synchronous: "FULL", secureDelete: "FAST", checkpoint: importCheckpoint}
	// modeInstall is a snapshot install's batch of rows.
	modeInstall = modeDurable
)

// wtx is a write transaction whose statements are prepared once per writer connection and
// reused across transactions.
type wtx struct {
	*sql.Tx
	// ctx is the transaction's context without its cancellation: once begun, a write
	// transaction runs to its end (see runTx), whatever context a statement is given.
	ctx   context.Context
	r     *Replica
	stmts map[string]*sql.Stmt
	// misses are queries prepared on the transaction only; they join the replica's cache
	// once the transaction has ended (the pool's one connection is held until then).
	misses []string
	ow     *opWriter
	// change is what the transaction did, published to Config.Feed once it has committed.
	change feed.Change
	// shortAdded are the short-ID keys of the records the transaction stored, shortRemoved
	// the hashes of those it named as deleted; shortStale is set when it deleted records
	// without naming them (deletesRecords). They reach Replica.shorts once it has committed.
	shortAdded   []shortKey
	shortRemoved []uint64
	shortStale   bool
	// paths are the file_paths rows the transaction looked up or added, by path (pathID).
	paths map[string]int64
	// origins are the origins rows the transaction looked up or added (originID).
	origins map[string]int64
	// ftsDeferred: the records stored since deferIndexing are indexed at the end.
	ftsDeferred bool
}

// ops returns the transaction's op writer; its version-vector update is flushed at commit.
func (t *wtx) ops() *opWriter {
	if t.ow == nil {
		t.ow = &opWriter{r: t.r, tx: t}
	}
	return t.ow
}

// record notes, for the change feed, that the transaction stored or changed the record id
// of kind (an op kind; OpForget names a forgotten ID).
func (t *wtx) record(kind, id string) {
	c := &t.change
	switch kind {
	case store.OpSession:
		c.Sessions = append(c.Sessions, id)
	case store.OpPrompt:
		c.Prompts = append(c.Prompts, id)
	case store.OpObservation:
		c.Observations = append(c.Observations, id)
	case store.OpSummary:
		c.Summaries = append(c.Summaries, id)
	case store.OpDevice:
		c.Devices = append(c.Devices, id)
	case store.OpForget:
		c.Forgotten = append(c.Forgotten, id)
	}
}

func (t *wtx) stmt(q string) (*sql.Stmt, error) {
	ctx := t.ctx
	if s, ok := t.stmts[q]; ok {
		return s, nil
	}
	var s *sql.Stmt
	if ps, ok := t.r.stmts.Load(q); ok {
		s = t.Tx.StmtContext(ctx, ps.(*sql.Stmt))
	} else {
		var err error
		if s, err = t.Tx.PrepareContext(ctx, q); err != nil {
			return nil, fmt.Errorf("prepare: %w", err)
		}
		t.misses = append(t.misses, q)
	}
	t.stmts[q] = s
	return s, nil
}

// ExecContext runs q through the statement cache, in the transaction's context.
func (t *wtx) ExecContext(_ context.Context, q string, args ...any) (sql.Result, error) {
	s, err := t.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(t.ctx, args...)
}

// QueryRowContext runs q through the statement cache, in the transaction's context.
func (t *wtx) QueryRowContext(_ context.Context, q string, args ...any) *sql.Row {
	s, err := t.stmt(q)
	if err != nil {
		return t.Tx.QueryRowContext(t.ctx, q, args...) // reports the same error on Scan
	}
	return s.QueryRowContext(t.ctx, args...)
}

// QueryContext runs q in the transaction's context.
func (t *wtx) QueryContext(_ context.Context, q string, args ...any) (*sql.Rows, error) {
	return t.Tx.QueryContext(t.ctx, q, args...)
}

// cache prepares queries on the writer pool for later transactions. It must run while no
// connection of the pool is held by the caller.
func (r *Replica) cache(ctx context.Context, queries []string) {
	for _, q := range queries {
		if _, ok := r.stmts.Load(q); ok {
			continue
		}
		s, err := r.w.PrepareContext(ctx, q)
		if err != nil {
			continue // stays uncached; the transaction path prepares it again
		}
		if _, loaded := r.stmts.LoadOrStore(q, s); loaded {
			s.Close()
		}
	}
}

// writeTx runs fn in one durable write transaction.
func (r *Replica) writeTx(ctx context.Context, fn func(tx *wtx) error) error {
	return r.writeTxMode(ctx, modeDurable, fn)
}

func (r *Replica) writeTxMode(ctx context.Context, m txMode, fn func(tx *wtx) error) error {
	var misses []string
	err := r.runTx(ctx, m, fn, &misses)
	if len(misses) > 0 {
		r.cache(context.Background(), misses)
	}
	return err
}

func (r *Replica) runTx(ctx context.Context, m txMode, fn func(tx *wtx) error, misses *[]string) error {
	conn, err := r.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Close()
	// Once the writer is ours the transaction runs to its end: cancelling it could only roll
	// back work already done, and with a cancellable context go-sqlite3 runs every statement
	// on a goroutine of its own to watch the context.
	ctx = context.WithoutCancel(ctx)
	// Holding the only writer connection makes these fields ours until Close.
	if r.connMode.synchronous != m.synchronous {
		if _, err := conn.ExecContext(ctx, "PRAGMA synchronous = "+m.synchronous); err != nil {
			return fmt.Errorf("set synchronous: %w", err)
		}
		r.connMode.synchronous = m.synchronous
	}
	if r.connMode.secureDelete != m.secureDelete {
		if _, err := conn.ExecContext(ctx, "PRAGMA secure_delete = "+m.secureDelete); err != nil {
			return fmt.Errorf("set secure_delete: %w", err)
		}
		r.connMode.secureDelete = m.secureDelete
	}
	if r.connMode.checkpoint != m.checkpoint {
		if _, err := conn.ExecContext(ctx, "PRAGMA wal_autocheckpoint = "+strconv.Itoa(m.checkpoint)); err != nil {
			return fmt.Errorf("set wal_autocheckpoint: %w", err)
		}
		r.connMode.checkpoint = m.checkpoint
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	t := &wtx{Tx: tx, ctx: ctx, r: r, stmts: map[string]*sql.Stmt{}}
	defer func() { *misses = t.misses }()
	err = fn(t)
	if err == nil {
		err = t.indexDeferred(ctx)
	}
	if err == nil {
		err = t.indexShortIDs(ctx)
	}
	if err == nil && t.ow != nil {
		err = t.ow.flush(ctx)
	}
	if err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	// Before anything hears of the commit: a read that follows it sees no older count.
	r.commits.Add(1)
	if len(t.change.Forgotten) > 0 {
		r.forgets.Add(1)
	}
	r.shorts.committed(t.shortAdded, t.shortRemoved, t.shortStale)
	// Published while the writer connection is still held: changes reach subscribers in
	// commit order. Publish never blocks, and an empty change publishes nothing.
	r.cfg.Feed.Publish(t.change)
	return nil
}

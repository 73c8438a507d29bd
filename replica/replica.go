package replica

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/mattn/go-sqlite3" // the database/sql driver "sqlite3" // the SQLite driver (build with -tags sqlite_fts5)

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/sqliteuri"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Sentinel errors.
var (
	ErrClosed   = errors.New("replica closed")
	ErrNotFound = errors.New("not found")
	ErrNoFTS5   = errors.New("this memnode was built without SQLite's FTS5 full-text search: rebuild it with -tags sqlite_fts5 (make build does)")
	// ErrLocked is returned by Open when another process held the database's write lock
	// for longer than Config.OpenLockWait while the schema was checked or migrated: the node
	// is memnode.db's only writer, so the holder is some other program (a sqlite3 shell in
	// a transaction, a backup tool). Open names it instead of waiting without end.
	ErrLocked = errors.New("the database is locked by another process")
	// ErrSchemaNewer is returned by Open for a database migrated by a newer memnode: this
	// build does not know its schema and must not write to it.
	ErrSchemaNewer = errors.New("the database was written by a newer memnode")
)

// Config configures a Replica.
type Config struct {
	// Path of the SQLite file; its directory must exist.
	Path string
	// Origin identifies this device in the op-log (its peer ID once sync is on).
	Origin string
	// LocalOnly reports whether a project's records must never leave the device: such
	// changes produce no ops. Nil means none.
	LocalOnly func(project string) bool
	Logger    *slog.Logger
	// Now is the wall clock (tests inject one).
	Now func() time.Time
	// Readers is the size of the read connection pool (default 4).
	Readers int
	// MaxClockSkew is how far ahead of Now a stamp may be (default DefaultMaxClockSkew);
	// Import and ApplyOps refuse later ones with memory.ErrClockAhead.
	MaxClockSkew time.Duration
	// FsyncAcks makes Enqueue fsync before it returns, so an acknowledged event survives
	// power loss, not only a crash, at the cost of one disk sync per acknowledgement batch.
	FsyncAcks bool
	// Feed receives one change per committed write transaction on memnode.db (records,
	// sessions, devices, forgets; not the queue, not derived vectors). Nil publishes nothing.
	Feed *feed.Bus
	// QueueIdle is how long the queue must have received no event, with none waiting,
	// before its WAL file is truncated (default DefaultQueueIdle).
	QueueIdle time.Duration
	// OpenLockWait is how long Open waits for a write lock another process holds before it
	// fails with ErrLocked (default DefaultOpenLockWait); after Open, writes wait up to 10 s.
	OpenLockWait time.Duration
	// Phase, if set, hears what Open is doing while it does it ("checking the database",
	// "migrating the database to schema 11", …): the node reports it as its start phase.
	Phase func(phase string)
}

// DefaultOpenLockWait keeps `memnode start` on a database another program holds locked
// well inside its 10 s bound for naming why the node did not come up.
const DefaultOpenLockWait = 3 * time.Second

// DefaultQueueIdle: after heavy traffic the queue's WAL keeps its peak size (up to the
// journal_size_limit, 64 MiB) until the next burst; a few quiet seconds give it back.
const DefaultQueueIdle = 5 * time.Second

// Replica is one device's database. Safe for concurrent use.
type Replica struct {
	cfg Config
	w   *sql.DB // the single writer connection
	r   *sql.DB // read-only pool
	q   *sql.DB // the queue database, its own file and writer (queue.go)
	// Statements of the enqueue hot path, prepared once.
	stmtSeen, stmtEnqueue *sql.Stmt
	clock                 clock
	log                   *slog.Logger
	enq                   chan enqueueReq
	// pending counts the queue's rows: read at open, then kept by the queue's only writer
	// paths (insertPending, deletePending), so QueueDepth costs nothing.
	pending  atomic.Int64
	stmts    sync.Map // query → *sql.Stmt on the writer connection
	connMode txMode   // pragmas in force on the writer connection (guarded by holding it)
	claimMu  sync.Mutex
	claimed  map[string]bool // sessions whose events a worker is processing
	// forgets counts committed transactions that forgot something (ForgetEpoch).
	forgets atomic.Uint64
	// queueVacuumed: purgeQueue has vacuumed the queue database since open (see there).
	queueVacuumed atomic.Bool
	mu            sync.Mutex // guards closed
	purgeMu       sync.Mutex // guards purgeOwed, purgeRunning (owePurge)
	purgeOwed     uint64     // forgets whose checkpoint readers kept from emptying the WAL
	purgeRunning  bool       // a background checkpoint retry runs
	closed        bool
	done          chan struct{}
	wg            sync.WaitGroup
	// longReads counts the reads in progress that hold a snapshot of the database for
	// seconds (longRead): while there is one, a checkpoint cannot empty the WAL, and
	// a forget does not wait for it to (purgeWAL).
	longReads atomic.Int32

	reads  *readStmts // the index reads' statements on the read pool (readindex.go)
	shorts shortIndex // short_ids in memory (shortid.go)
	// commits counts committed write transactions; it dates what counts holds.
	commits atomic.Uint64
	counts  matchCounts // CountMatches' answers since the last commit (readindex.go)

	// inForget, when set (tests only), runs inside each of a forget's write transactions,
	// before it commits, with the number of records the transaction deleted: a test holds
	// the writer there, counts what one transaction does, or fails it (as a crash would).
	inForget func(records int) error
	// forgetTxRecords, when set (tests only), replaces forgetTxRecords.
	forgetTxRecords int
	// forgetWait, when set (tests only), replaces forgetCheckpointWait.
	forgetWait time.Duration
}

// Open opens (creating if needed) the database at cfg.Path and brings its schema up to date.
func Open(ctx context.Context, cfg Config) (*Replica, error) {
	if cfg.Path == "" || cfg.Origin == "" {
		return nil, errors.New("open replica: path and origin are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LocalOnly == nil {
		cfg.LocalOnly = func(string) bool { return false }
	}
	if cfg.Readers <= 0 {
		cfg.Readers = 4
	}
	if cfg.MaxClockSkew <= 0 {
		cfg.MaxClockSkew = DefaultMaxClockSkew
	}
	if cfg.OpenLockWait <= 0 {
		cfg.OpenLockWait = DefaultOpenLockWait
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	// FULL: every commit of records and ops is fsynced, so an op a peer may have seen is
	// never lost and its seq never reused. (Acknowledged hook events live in the queue
	// database, fsynced only with FsyncAcks: see queue.go.)
	q.Set("_synchronous", "FULL")
	q.Set("_busy_timeout", "10000")
	q.Set("_foreign_keys", "on")
	q.Set("_secure_delete", "fast") // forget switches it ON for its own transactions (tx.go)
	q.Set("_txlock", "immediate")
	// 64 MiB page cache for the writer (SQLite's default is 2 MiB). A write transaction's
	// dirty pages must fit: past the cache SQLite spills them to the WAL before the commit
	// and may write the same page again later in the transaction, and every page it must
	// read back (the random-keyed short_ids and observation_files indexes, the FTS segments
	// being merged) is a read from the file. An import transaction of 5,000 records dirties
	// ~30 MiB at 100k observations. The readers keep 32 MiB each.
	q.Set("_cache_size", "-65536")
	// SQLite gives the -wal and -shm files the database file's mode: a 0600 database keeps
	// all three private whatever the process umask.
	// An older version's files (0644) are tightened too.
	for _, p := range []string{cfg.Path, QueuePath(cfg.Path)} {
		for _, f := range []string{p, p + "-wal", p + "-shm"} {
			if err := privateFile(f, f == p); err != nil {
				return nil, fmt.Errorf("open replica: %w", err)
			}
		}
	}
	// Statement journals in memory: inside a transaction every insert of a record or an op
	// journals the pages it changes, and the statement that indexes a batch's records
	// (indexDeferred) changes megabytes of them; in a temp file that was a fifth of an
	// import's CPU in write(2), and bytes the node wrote. They hold one statement's pages.
	w := openDB(sqliteuri.File(cfg.Path, q), "PRAGMA temp_store = MEMORY")
	w.SetMaxOpenConns(1)
	w.SetConnMaxLifetime(0)
	w.SetMaxIdleConns(1)

	rq := url.Values{}
	rq.Set("_busy_timeout", "10000")
	rq.Set("_query_only", "true")
	rq.Set("mode", "ro")
	// 32 MiB page cache per reader (default 2 MiB): search touches the FTS segments of the
	// whole index, and re-reading them through pread dominates a query otherwise.
	rq.Set("_cache_size", "-32000")
	r := openDB(sqliteuri.File(cfg.Path, rq))
	r.SetMaxOpenConns(cfg.Readers)
	r.SetMaxIdleConns(cfg.Readers)
	// An idle reader gives its page cache back: a node between sessions stays small.
	r.SetConnMaxIdleTime(5 * time.Minute)

	rep := &Replica{cfg: cfg, w: w, r: r, reads: newReadStmts(r), log: cfg.Logger, enq: make(chan enqueueReq, 1024), done: make(chan struct{}),
		claimed: map[string]bool{}, connMode: txMode{synchronous: "FULL", secureDelete: "FAST", checkpoint: walCheckpoint}}
	rep.clock.now = cfg.Now
	rep.clock.max = rep.maxStamp
	if err := rep.openSchema(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	var err error
	if rep.q, err = openQueue(ctx, QueuePath(cfg.Path), cfg.FsyncAcks); err != nil {
		w.Close()
		r.Close()
		return nil, err
	}
	var depth int64
	err = rep.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM pending").Scan(&depth)
	rep.pending.Store(depth)
	if err == nil {
		rep.stmtSeen, err = r.PrepareContext(ctx, "SELECT 1 FROM seen_events WHERE event_id = ?")
	}
	if err == nil {
		rep.stmtEnqueue, err = rep.q.PrepareContext(ctx, `INSERT OR IGNORE INTO pending(event_id, kind, session_id, project, payload, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`)
	}
	if err != nil {
		w.Close()
		r.Close()
		rep.q.Close()
		return nil, fmt.Errorf("open replica: prepare: %w", err)
	}
	rep.wg.Add(1)
	go rep.commitLoop()
	return rep, nil
}

// ForgetEpoch counts the committed transactions that forgot something — local forgets and
// forgets applied from other devices or imports — since the replica opened. A forget is the
// only write to a session's processing state besides the commit of the worker that holds
// its claim (it makes a turn private, drops prompt text), so a cache of that state is valid
// while the epoch it was filled at stays current. It moves before Forget returns.
func (r *Replica) ForgetEpoch() uint64 { return r.forgets.Load() }

// Origin returns this replica's origin ID.
func (r *Replica) Origin() string { return r.cfg.Origin }

// Close stops the group committer and closes the database. It is idempotent.
func (r *Replica) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	close(r.done)
	r.mu.Unlock()
	r.wg.Wait()
	r.stmts.Range(func(_, s any) bool { s.(*sql.Stmt).Close(); return true })
	r.reads.close()
	r.stmtSeen.Close()
	r.stmtEnqueue.Close()
	// Leave a small WAL behind: checkpoint what we can.
	_, _ = r.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	return errors.Join(r.r.Close(), r.w.Close(), r.q.Close())
}

// openSchema checks the file, migrates its schema and loads the clock, waiting at most
// OpenLockWait for a write lock another process holds (ErrLocked). The writer connection
// is the pool's only one, so the pragmas set here stay on it.
func (r *Replica) openSchema(ctx context.Context) error {
	if _, err := r.w.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(r.cfg.OpenLockWait.Milliseconds(), 10)); err != nil {
		return corruptOr(fmt.Errorf("open replica: %w", err))
	}
	r.phase("checking the database")
	err := r.checkOpen(ctx)
	if err == nil {
		err = r.migrate(ctx)
	}
	if err == nil {
		r.phase("loading the clock")
		err = r.loadClock(ctx)
	}
	if err == nil {
		_, err = r.w.ExecContext(ctx, "PRAGMA busy_timeout = 10000")
	}
	if isBusy(err) {
		return fmt.Errorf("%w (waited %s): %w", ErrLocked, r.cfg.OpenLockWait, err)
	}
	return err
}

// PhaseMigrating starts the phase of a schema migration ("migrating the database to schema
// 13"): one SQL script that may rewrite every row of a big database (an FTS rebuild is
// minutes at 1M), so it runs as long as its work, without a step between.
const PhaseMigrating = "migrating the database"

// phase tells Config.Phase what Open does now.
func (r *Replica) phase(p string) {
	if r.cfg.Phase != nil {
		r.cfg.Phase(p)
	}
}

// isBusy reports whether err is, or wraps, SQLite's SQLITE_BUSY or SQLITE_LOCKED.
func isBusy(err error) bool {
	return sqliteBusy(err)
}

func (r *Replica) migrate(ctx context.Context) error {
	var fts int
	if err := r.w.QueryRowContext(ctx, "SELECT sqlite_compileoption_used('ENABLE_FTS5')").Scan(&fts); err != nil {
		return fmt.Errorf("open replica: %w", err)
	}
	if fts != 1 {
		return ErrNoFTS5
	}
	if _, err := r.w.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
		version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var cur int
	if err := r.w.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&cur); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	seen := map[int]string{}
	versions := make([]int, len(entries))
	for i, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return fmt.Errorf("migrate: bad migration name %q", e.Name())
		}
		if prev, dup := seen[v]; dup {
			return fmt.Errorf("migrate: %s and %s have the same number", prev, e.Name())
		}
		seen[v] = e.Name()
		versions[i] = v
	}
	if known := slices.Max(versions); cur > known {
		return fmt.Errorf("%w (schema version %d; this build knows up to %d): run the newer memnode", ErrSchemaNewer, cur, known)
	}
	for i, e := range entries {
		v := versions[i]
		if v <= cur {
			continue
		}
		r.phase(fmt.Sprintf("%s to schema %d", PhaseMigrating, v))
		body, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		tx, err := r.w.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", e.Name(), err)
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", e.Name(), err)
		}
		if step := migrationSteps[v]; step != nil {
			if err := step(ctx, tx); err != nil {
				tx.Rollback()
				return fmt.Errorf("migrate %s: %w", e.Name(), err)
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_version(version, applied_at) VALUES (?, ?)", v, r.cfg.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", e.Name(), err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate %s: %w", e.Name(), err)
		}
		r.log.Info("schema migrated", "version", v)
	}
	return nil
}

// QueuePath is the queue database that goes with the replica at path.
func QueuePath(path string) string { return strings.TrimSuffix(path, ".db") + ".queue.db" }

// queueSchema is the whole queue database: it holds nothing but events waiting to become
// records, so it needs no migrations — a table it lacks is created.
const queueSchema = `
CREATE TABLE IF NOT EXISTS pending (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id   TEXT NOT NULL UNIQUE,
    kind       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    project    TEXT NOT NULL,
    payload    BLOB NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS pending_session ON pending(session_id, id);
-- LastQueuedPrompt (the privacy gate's read when its per-session cache misses): one index
-- seek, not a walk over a session's backlog. Partial, so a queued tool call — nearly every
-- row — writes no entry on insert nor on delete; pending_session_kind, its full
-- predecessor, cost every row a third index (~35 % more queue WAL pages per event).
DROP INDEX IF EXISTS pending_session_kind;
CREATE INDEX IF NOT EXISTS pending_prompt ON pending(session_id, id) WHERE kind = 'prompt';
-- Dead letters: events that failed MaxAttempts times, set aside so they stop being retried
-- (memnode status counts them; memnode repair --purge-dead deletes them).
CREATE TABLE IF NOT EXISTS dead (
    id         INTEGER PRIMARY KEY,
    event_id   TEXT NOT NULL,
    kind       TEXT NOT NULL,
    session_id TEXT NOT NULL,
    project    TEXT NOT NULL,
    payload    BLOB NOT NULL,
    attempts   INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    dead_at    INTEGER NOT NULL
);`

// openQueue opens the queue database. It is a separate SQLite file, with its own writer,
// so that acknowledging an event never waits for a worker's durable commit of records.
// NORMAL sync: an acknowledged event survives a crash at once; fsyncAcks adds power loss.
func openQueue(ctx context.Context, path string, fsyncAcks bool) (*sql.DB, error) {
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "NORMAL")
	if fsyncAcks {
		q.Set("_synchronous", "FULL")
	}
	q.Set("_busy_timeout", "10000")
	q.Set("_txlock", "immediate")
	// ON: a processed (deleted) event's payload is zeroed in its page, so a forgotten
	// record's raw hook event does not linger in free space (see purgeQueue).
	q.Set("_secure_delete", "on")
	db, err := sql.Open("sqlite3", sqliteuri.File(path, q))
	if err != nil {
		return nil, fmt.Errorf("open queue: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	// Every row is inserted and soon deleted: checkpoint (and its syncs) rarely, and keep
	// the WAL file from growing past what one checkpoint leaves.
	if _, err := db.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 16384; PRAGMA journal_size_limit = 67108864"); err != nil {
		db.Close()
		return nil, fmt.Errorf("open queue: %w", err)
	}
	if _, err := db.ExecContext(ctx, queueSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open queue: %w", err)
	}
	return db, nil
}

// SchemaVersion returns the applied schema version.
func (r *Replica) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := r.r.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_version").Scan(&v)
	return v, err
}

// loadHLCMax is the clock's start: the kept highest op stamp (migration 0014), one
// primary-key read (TestLoadClockReadsOneRow holds the plan).
const loadHLCMax = "SELECT hlc FROM hlc_max WHERE id = 1"

// loadClock resumes the clock from the highest op stamp, kept in hlc_max. Only when the row
// is not filled yet (the first open after migration 0014) or holds a stamp past the clock
// bound (this device's clock went back more than MaxClockSkew since) is the op-log scanned,
// within the bound: a stamp past it is not resumed from, as it would keep the clock there,
// or past 2^63, for good.
func (r *Replica) loadClock(ctx context.Context) error {
	var kept sql.NullInt64
	if err := r.w.QueryRowContext(ctx, loadHLCMax).Scan(&kept); err != nil {
		return fmt.Errorf("load clock: %w", err)
	}
	if kept.Valid && kept.Int64 >= 0 && uint64(kept.Int64) <= r.maxStamp() {
		r.clock.Observe(uint64(kept.Int64))
		return nil
	}
	var last sql.NullInt64
	if err := r.w.QueryRowContext(ctx, "SELECT MAX(hlc) FROM ops WHERE hlc BETWEEN 0 AND ?", int64(r.maxStamp())).Scan(&last); err != nil {
		return fmt.Errorf("load clock: %w", err)
	}
	if !last.Valid {
		last.Int64 = 0
	}
	if !kept.Valid || kept.Int64 != last.Int64 {
		// Filled, or brought back from a stamp past the bound, so the next open reads it.
		if _, err := r.w.ExecContext(ctx, "UPDATE hlc_max SET hlc = ? WHERE id = 1", last.Int64); err != nil {
			return fmt.Errorf("load clock: %w", err)
		}
	}
	r.clock.Observe(uint64(last.Int64))
	return nil
}

// ReadDB exposes the read-only pool, for tests and diagnostics that inspect the schema
// directly; consumers read through the typed methods (the index reads are in
// readindex.go). Writes through it fail.
func (r *Replica) ReadDB() *sql.DB { return r.r }

// privateFile takes group and other bits off path; with create it first creates it empty
// with mode 0600 if it does not exist (SQLite takes an empty file as a new database).
func privateFile(path string, create bool) error {
	flag := os.O_RDONLY
	if create {
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if !create && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", filepath.Base(path), err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(fi.Mode().Perm() &^ 0o077); err != nil {
			return fmt.Errorf("chmod %s: %w", filepath.Base(path), err)
		}
	}
	return nil
}

package team

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// StateDB is the SQL database that holds this device's team state, in SQLite's dialect: the
// schema below and every query are team's, the driver is not. Whoever wires team opens the
// file (node: team/statedb.Open, go-sqlite3), so team links no SQLite; *sql.DB satisfies it.
// Writes need one connection (or immediate transactions): team does not retry SQLITE_BUSY.
type StateDB interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	Close() error
}

// OpenStateFunc opens the state file at a path (Config.OpenState).
type OpenStateFunc func(ctx context.Context, path string) (StateDB, error)

// state is this device's side of the team: <data dir>/team.db (0600). It holds the join
// (cluster URLs, user, pinned admins — never the password, which lives in the key store),
// the shared projects, the outbox, the pull cursors, the authors learned from verified ops,
// and the rejected ops.
type state struct{ db StateDB }

func stateSchema() []string {
	return []string{
		`CREATE TABLE IF NOT EXISTS config(key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS shared(project TEXT PRIMARY KEY)`,
		// own ops of shared projects, numbered per project (tseq), signed, before and after
		// the push: a retry resends the same rows, so the cluster's UNIQUE key drops it.
		`CREATE TABLE IF NOT EXISTS outbox(seq INTEGER PRIMARY KEY, project TEXT NOT NULL, tseq INTEGER NOT NULL,
			kind TEXT NOT NULL, record_id TEXT NOT NULL, hlc INTEGER NOT NULL, payload BLOB, payload_hash TEXT NOT NULL,
			sig TEXT NOT NULL, pushed INTEGER NOT NULL DEFAULT 0, UNIQUE(project, tseq))`,
		`CREATE INDEX IF NOT EXISTS outbox_pending ON outbox(pushed, seq)`,
		`CREATE INDEX IF NOT EXISTS outbox_stream ON outbox(pushed, project, tseq)`, // push order
		`CREATE TABLE IF NOT EXISTS cursors(project TEXT PRIMARY KEY, pos INTEGER NOT NULL)`,
		// record → its author device and project, from own pushes and verified pulls: who may
		// forget it, and which project's stream carries the tombstone.
		`CREATE TABLE IF NOT EXISTS records(id TEXT PRIMARY KEY, origin TEXT NOT NULL, project TEXT NOT NULL)`,
		// origin → the author name its first verified op gave; later ops must agree.
		`CREATE TABLE IF NOT EXISTS authors(origin TEXT PRIMARY KEY, author TEXT NOT NULL)`,
		// accepted admin changes at their cluster position (admin.go); with the founders
		// pinned at join they give the admins in force at any position.
		`CREATE TABLE IF NOT EXISTS admin_log(pos INTEGER PRIMARY KEY, signer TEXT NOT NULL, action TEXT NOT NULL, target TEXT NOT NULL, name TEXT NOT NULL)`,
		// rows under this device's own (project, tseq) it did not sign, reported in status.
		`CREATE TABLE IF NOT EXISTS squatted(pos INTEGER PRIMARY KEY, project TEXT NOT NULL, tseq INTEGER NOT NULL, error TEXT NOT NULL)`,
		// pulled ops the replica did not take yet (stamped too far ahead of this clock, or
		// behind such an op in their stream), by their local stream: retried each pull,
		// never fetched again (hold.go).
		`CREATE TABLE IF NOT EXISTS held(local_origin TEXT NOT NULL, seq INTEGER NOT NULL, pos INTEGER NOT NULL, origin TEXT NOT NULL,
			project TEXT NOT NULL, kind TEXT NOT NULL, record_id TEXT NOT NULL, hlc INTEGER NOT NULL, payload BLOB, PRIMARY KEY(local_origin, seq))`,
		`CREATE TABLE IF NOT EXISTS rejected(pos INTEGER PRIMARY KEY, origin TEXT NOT NULL, tseq INTEGER NOT NULL,
			kind TEXT NOT NULL, record_id TEXT NOT NULL, reason TEXT NOT NULL)`,
	}
}

func openState(ctx context.Context, open OpenStateFunc, path string) (*state, error) {
	db, err := open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("open team state: %w", err)
	}
	for _, s := range stateSchema() {
		if _, err := db.ExecContext(ctx, s); err != nil {
			db.Close()
			return nil, fmt.Errorf("open team state: %w", err)
		}
	}
	return &state{db: db}, nil
}

func (s *state) close() error { return s.db.Close() }

func (s *state) get(ctx context.Context, key string) (string, error) {
	var v string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM config WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return v, err
}

func (s *state) set(ctx context.Context, kv map[string]string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for k, v := range kv {
		if _, err := tx.ExecContext(ctx, `INSERT INTO config(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *state) list(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func (s *state) count(ctx context.Context, q string, args ...any) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

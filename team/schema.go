package team

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// SchemaVersion is the newest team schema this build knows. A cluster at a higher version
// is refused (ErrSchemaNewer): an older memnode must not write rows a newer one reads
// differently.
const SchemaVersion = 1

// migrations returns the cluster schema, one idempotent batch per version (index i is
// version i+1). Every statement is IF NOT EXISTS / OR IGNORE, so members migrating at the
// same moment both succeed; each batch runs atomically (?transaction). Never edit a
// released version: add the next.
func migrations() [][]string {
	return [][]string{{
		`CREATE TABLE IF NOT EXISTS team_schema(version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
		// name, admins: written once by the member that creates the team, pinned by each
		// member when it joins (later changes on the cluster are ignored).
		`CREATE TABLE IF NOT EXISTS team_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS team_members(origin TEXT PRIMARY KEY, author TEXT NOT NULL, joined_at INTEGER NOT NULL, sig TEXT NOT NULL)`,
		// The team's op-log: pos is the pull cursor (assigned in Raft order, so it only
		// grows). Ed25519 signatures are deterministic, so the key with sig makes a retried
		// push a no-op, while a forged row can never take the place of the real op.
		`CREATE TABLE IF NOT EXISTS team_ops(pos INTEGER PRIMARY KEY AUTOINCREMENT, origin TEXT NOT NULL, tseq INTEGER NOT NULL,
			project TEXT NOT NULL, kind TEXT NOT NULL, record_id TEXT NOT NULL, hlc TEXT NOT NULL, payload TEXT,
			payload_hash TEXT NOT NULL, author TEXT NOT NULL, sig TEXT NOT NULL, UNIQUE(origin, project, tseq, sig))`,
		`CREATE INDEX IF NOT EXISTS team_ops_project ON team_ops(project, pos)`,
		`CREATE INDEX IF NOT EXISTS team_ops_record ON team_ops(record_id)`,
		// Searchable text of every shared record, for `memnode search --team`.
		`CREATE TABLE IF NOT EXISTS team_records(rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, project TEXT NOT NULL,
			kind TEXT NOT NULL, type TEXT NOT NULL, author TEXT NOT NULL, origin TEXT NOT NULL, title TEXT NOT NULL,
			body TEXT NOT NULL, created_at INTEGER NOT NULL)`,
		`CREATE VIRTUAL TABLE IF NOT EXISTS team_fts USING fts5(title, body, content='team_records', content_rowid='rid', tokenize='porter unicode61')`,
		`CREATE TRIGGER IF NOT EXISTS team_records_ai AFTER INSERT ON team_records BEGIN
			INSERT INTO team_fts(rowid, title, body) VALUES (new.rid, new.title, new.body); END`,
		`CREATE TRIGGER IF NOT EXISTS team_records_ad AFTER DELETE ON team_records BEGIN
			INSERT INTO team_fts(team_fts, rowid, title, body) VALUES ('delete', old.rid, old.title, old.body); END`,
	}}
}

// clusterVersion reads the cluster's schema version (0 before the first migration).
func clusterVersion(ctx context.Context, c *rq) (int, error) {
	res, err := c.query(ctx, levelStrong, []stmt{st(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'team_schema'`)})
	if err != nil {
		return 0, err
	}
	if len(res) == 0 || len(res[0].Values) == 0 {
		return 0, nil
	}
	res, err = c.query(ctx, levelStrong, []stmt{st(`SELECT COALESCE(MAX(version), 0) FROM team_schema`)})
	if err != nil {
		return 0, err
	}
	if len(res) == 0 || len(res[0].Values) == 0 {
		return 0, nil
	}
	return intOf(res[0].Values[0][0])
}

// migrate brings the cluster to SchemaVersion and returns the version it found before.
func migrate(ctx context.Context, c *rq, now time.Time) (int, error) {
	v, err := clusterVersion(ctx, c)
	if err != nil {
		return 0, fmt.Errorf("read team schema: %w", err)
	}
	if v > SchemaVersion {
		return v, fmt.Errorf("%w (cluster at %d, this memnode knows %d)", ErrSchemaNewer, v, SchemaVersion)
	}
	for i, m := range migrations()[v:] {
		version := v + i + 1
		batch := make([]stmt, 0, len(m)+1)
		for _, s := range m {
			batch = append(batch, st(s))
		}
		batch = append(batch, st(`INSERT OR IGNORE INTO team_schema(version, applied_at) VALUES (?, ?)`, version, now.UnixMilli()))
		if _, err := c.execute(ctx, batch); err != nil {
			return v, fmt.Errorf("migrate team schema to %d: %w", version, err)
		}
	}
	return v, nil
}

// intOf reads an integer cell of a query answer.
func intOf(v any) (int, error) {
	n, err := int64Of(v)
	return int(n), err
}

func int64Of(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		return x.Int64()
	case string:
		return strconv.ParseInt(x, 10, 64)
	case nil:
		return 0, nil
	default:
		return 0, fmt.Errorf("team cluster: %T is not an integer", v)
	}
}

func strOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	default:
		return ""
	}
}

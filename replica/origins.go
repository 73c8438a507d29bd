package replica

import (
	"context"
	"database/sql"
	"fmt"
)

// The op-log names an origin by its number in origins (migration 16, DESIGN.md "Schema"):
// a peer ID is 52 characters and nearly every op is of one origin. Only storage changes:
// every op read joins origins, so what leaves the replica (OpsSince, snapshots, dumps)
// names origins as before.

// opsOrigin is the origin of the op row o in a query that reads ops as o.
const opsOrigin = "(SELECT origin FROM origins WHERE id = o.origin_id)"

// originIDOf is the number of the origin bound to ?1 in a statement on ops (NULL, which
// matches no row, when the origin never had an op here).
const originIDOf = "(SELECT id FROM origins WHERE origin = ?1)"

// originID returns origin's number, giving it one when it has none (interned).
func (tx *wtx) originID(ctx context.Context, origin string) (int64, error) {
	id, err := tx.interned(ctx, &tx.origins, origin, "SELECT id FROM origins WHERE origin = ?",
		"INSERT INTO origins(origin) VALUES (?)", origin)
	if err != nil {
		return 0, fmt.Errorf("number origin: %w", err)
	}
	return id, nil
}

// opsByOriginID is migration 16's step: ops becomes a rowid table naming its origin by
// number, copied in (origin, seq) order. A table already in that shape is left as it is,
// so the migration can run again.
func opsByOriginID(ctx context.Context, tx *sql.Tx) error {
	var named int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_table_info('ops') WHERE name = 'origin_id'").Scan(&named); err != nil {
		return fmt.Errorf("number op origins: %w", err)
	}
	if named > 0 {
		return nil
	}
	// The triggers on ops (counts, hlc_max) go with the old table: they are made again
	// from their own definitions.
	triggers, err := triggerDefs(ctx, tx, "tbl_name = 'ops'")
	if err != nil {
		return fmt.Errorf("number op origins: %w", err)
	}
	for _, q := range append([]string{opsByOriginIDSQL}, triggers...) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("number op origins: %w", err)
		}
	}
	return nil
}

// opsByOriginIDSQL moves ops to numbered origins (migration 16). The indexes exist before
// the copy, as they will while ops grows.
const opsByOriginIDSQL = `INSERT OR IGNORE INTO origins(origin) SELECT DISTINCT origin FROM ops ORDER BY origin;
CREATE TABLE ops_v16 (
    origin_id INTEGER NOT NULL,      -- origins.id
    seq       INTEGER NOT NULL,
    hlc       INTEGER NOT NULL,
    kind      TEXT NOT NULL,
    record_id TEXT NOT NULL,
    payload   BLOB,                  -- NULL once the record was forgotten
    inrow     INTEGER NOT NULL DEFAULT 0
);
INSERT INTO ops_v16(origin_id, seq, hlc, kind, record_id, payload, inrow)
    SELECT g.id, o.seq, o.hlc, o.kind, o.record_id, o.payload, o.inrow FROM ops o JOIN origins g ON g.origin = o.origin
    ORDER BY g.id, o.seq;
DROP TABLE ops;
ALTER TABLE ops_v16 RENAME TO ops;
CREATE UNIQUE INDEX ops_seq ON ops(origin_id, seq);
CREATE INDEX ops_record ON ops(record_id);`

package replica

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
)

// An observation's content hash is stored as its 16 bytes (migration 17) when it is the
// form HashContent gives (32 lower-case hex digits), and as the text it is otherwise (a
// peer's or an import's value this build did not compute): either way it reads back as the
// string that was stored, which the in-row op payload is rebuilt from byte for byte
// (oplog_inrow.go). The hash is only ever compared for equality (a session's repeated
// observations, commit.go), through hashValue on both sides. What leaves the replica (reads,
// exports, snapshots, dumps) carries the text.

// hashValue is how content hash h is stored and looked up.
func hashValue(h string) any {
	if len(h) != 32 {
		return h
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return h
		}
	}
	b, _ := hex.DecodeString(h) // 32 hex digits: no error
	return b
}

// hashText is the stored form v read back as the content hash's text.
func hashText(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case []byte:
		if len(x) == 16 {
			return hex.EncodeToString(x), nil
		}
		return string(x), nil
	}
	return "", fmt.Errorf("content hash of type %T", v)
}

// hashColumn scans a content_hash column into s.
type hashColumn struct{ s *string }

func (c hashColumn) Scan(src any) error {
	h, err := hashText(src)
	*c.s = h
	return err
}

// hashTextSQL is the content_hash column as text in SQL (the dump's form).
const hashTextSQL = "CASE WHEN typeof(content_hash) = 'blob' THEN lower(hex(content_hash)) ELSE content_hash END"

// packContentHashes is migration 17's step: every content hash in HashContent's form is
// stored as its bytes. The FTS trigger on updates of observations is set aside meanwhile
// (the indexed text does not change, and re-indexing every row would cost more than the
// rewrite) and made again from its own definition.
func packContentHashes(ctx context.Context, tx *sql.Tx) error {
	trigger, err := triggerDefs(ctx, tx, "name = 'observations_au'")
	if err != nil {
		return fmt.Errorf("pack content hashes: %w", err)
	}
	if len(trigger) > 0 {
		if _, err := tx.ExecContext(ctx, "DROP TRIGGER observations_au"); err != nil {
			return fmt.Errorf("pack content hashes: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE observations SET content_hash = unhex(content_hash)
		WHERE typeof(content_hash) = 'text' AND length(content_hash) = 32 AND content_hash NOT GLOB '*[^0-9a-f]*'`); err != nil {
		return fmt.Errorf("pack content hashes: %w", err)
	}
	for _, q := range trigger {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("pack content hashes: %w", err)
		}
	}
	return nil
}

// triggerDefs returns the CREATE TRIGGER statements SQLite keeps for the triggers where
// (a condition on sqlite_schema's name and tbl_name) selects: a migration that rebuilds a
// table, or rewrites its rows with a trigger set aside, makes them again from their own
// definitions rather than from a copy that a later migration would leave behind.
func triggerDefs(ctx context.Context, tx *sql.Tx, where string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT sql FROM sqlite_schema WHERE type = 'trigger' AND "+where+" ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var defs []string
	for rows.Next() {
		var q string
		if err := rows.Scan(&q); err != nil {
			return nil, err
		}
		defs = append(defs, q)
	}
	return defs, rows.Err()
}

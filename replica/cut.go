package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"strings"

	"github.com/memnode/memnode/feed"
)

// CutOrigin makes seq the last op of origin this replica will ever hold: the ops of origin
// past it are deleted with what they wrote (records they created are deleted, session and
// device registers they won are recomputed from the remaining ops), and ApplyOps drops them
// from now on. Sync calls it when a device is removed, with the removal's cut-off, so a
// removed device's later writes are dropped everywhere, whatever path they arrive by.
// A cut only rises: a lower seq than the current cut changes nothing. It returns how many
// ops it deleted.
//
// What a cut cannot undo: a forget the removed device wrote past the cut that was applied
// here before the cut; the forgotten content is gone (privacy comes first).
func (r *Replica) CutOrigin(ctx context.Context, origin string, seq uint64) (int, error) {
	if origin == "" || origin == r.cfg.Origin {
		return 0, fmt.Errorf("cut origin %q: %w", origin, store.ErrBadOp)
	}
	dropped := 0
	err := r.writeTx(ctx, func(tx *wtx) error {
		dropped = 0
		tx.change.Origin = feed.Device
		if _, err := tx.ExecContext(ctx, `INSERT INTO origin_cuts(origin, seq) VALUES (?, ?)
			ON CONFLICT(origin) DO UPDATE SET seq = MAX(seq, excluded.seq)`, origin, seq); err != nil {
			return fmt.Errorf("cut origin: %w", err)
		}
		var err error
		dropped, err = r.cutTx(ctx, tx, origin)
		return err
	})
	if err != nil {
		return 0, err
	}
	return dropped, nil
}

// cutTx applies origin's recorded cut inside tx: its ops past the cut are deleted, its
// version-vector entry lowered to the cut and the records they touched rewound. It returns
// how many ops it deleted.
func (r *Replica) cutTx(ctx context.Context, tx *wtx, origin string) (int, error) {
	cut, _, err := originCut(ctx, tx, origin)
	if err != nil {
		return 0, err
	}
	rows, err := tx.QueryContext(ctx, "SELECT DISTINCT kind, record_id FROM ops WHERE origin_id = "+originIDOf+" AND seq > ?2", origin, cut)
	if err != nil {
		return 0, fmt.Errorf("cut origin: %w", err)
	}
	type rec struct{ kind, id string }
	var recs []rec
	for rows.Next() {
		var x rec
		if err := rows.Scan(&x.kind, &x.id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("cut origin: %w", err)
		}
		recs = append(recs, x)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("cut origin: %w", err)
	}
	res, err := tx.ExecContext(ctx, "DELETE FROM ops WHERE origin_id = "+originIDOf+" AND seq > ?2", origin, cut)
	if err != nil {
		return 0, fmt.Errorf("cut origin: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := tx.ExecContext(ctx, "UPDATE version_vector SET seq = ? WHERE origin = ? AND seq > ?", cut, origin, cut); err != nil {
		return 0, fmt.Errorf("cut origin: %w", err)
	}
	for _, x := range recs {
		if err := r.rewind(ctx, tx, x.kind, x.id); err != nil {
			return 0, fmt.Errorf("cut origin %s: %w", x.id, err)
		}
	}
	return int(n), nil
}

// rewind makes a record what the remaining ops say: it deletes the row and applies again
// the ops still held for it (none for a record the cut origin created; for a register,
// the values the other devices wrote, whose LWW winner comes out the same in any order).
// A forget is not rewound: its tombstone stays.
func (r *Replica) rewind(ctx context.Context, tx *wtx, kind, id string) error {
	var del string
	key := id
	switch kind {
	case store.OpObservation:
		del = "DELETE FROM observations WHERE id = ?"
	case store.OpPrompt:
		del = "DELETE FROM prompts WHERE id = ?"
	case store.OpSummary:
		del = "DELETE FROM summaries WHERE id = ?"
	case store.OpSession:
		del = "DELETE FROM sessions WHERE id = ?"
	case store.OpDevice:
		del = "DELETE FROM devices WHERE origin = ?"
		key = strings.TrimPrefix(id, "device:")
	case store.OpSupersede:
		del = "DELETE FROM supersedes WHERE old_id = ?"
	case store.OpPin:
		del = "DELETE FROM pins WHERE id = ?"
	default:
		return nil
	}
	tx.deletesRecords()
	// The ops are read first: an observation op kept in the row (oplog_inrow.go) gets its
	// payload from the row about to be deleted.
	rows, err := tx.QueryContext(ctx, `SELECT g.origin, o.seq, o.hlc, o.kind, o.record_id, o.payload, o.inrow FROM ops o JOIN origins g ON g.id = o.origin_id
		WHERE o.record_id = ? AND o.kind = ? ORDER BY g.origin, o.seq`, id, kind)
	if err != nil {
		return err
	}
	var ops []store.Op
	var inRow []int
	for rows.Next() {
		var op store.Op
		var seq, hlc int64
		var flag bool
		if err := rows.Scan(&op.Origin, &seq, &hlc, &op.Kind, &op.RecordID, &op.Payload, &flag); err != nil {
			rows.Close()
			return err
		}
		op.Seq, op.HLC = uint64(seq), uint64(hlc)
		if flag {
			inRow = append(inRow, len(ops))
		}
		ops = append(ops, op)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, i := range inRow {
		if err := materialize(ctx, tx, &ops[i]); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, del, key); err != nil {
		return err
	}
	tx.record(kind, key) // subscribers re-read it: gone, or as the remaining ops say
	for _, op := range ops {
		if err := r.applyOne(ctx, tx, op); err != nil {
			return err
		}
	}
	return nil
}

// originCut returns the cut-off of origin, if it has one.
func originCut(ctx context.Context, tx *wtx, origin string) (uint64, bool, error) {
	var s int64
	err := tx.QueryRowContext(ctx, "SELECT seq FROM origin_cuts WHERE origin = ?", origin).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("origin cut: %w", err)
	}
	return uint64(s), true, nil
}

package team

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/memnode/memnode/replica"
)

// Kind of the placeholder a rejected op becomes locally: an op kind no replica interprets,
// stored without content, so the stream's seqs stay contiguous and the op is never fetched
// again.
const kindRejected = "team-rejected"

// LocalOrigin is the origin under which the ops of one author device in one shared project
// are applied to the local replica: each (device, project) stream is numbered 1, 2, 3 … on
// the cluster, which is what the replica's delivery rule (contiguous seqs) needs. The
// records keep their own origin (carried in the payload), so a record that also arrives by
// device sync is the same row, stored once.
func LocalOrigin(origin, project string) string { return "team:" + origin + ":" + project }

// Progress is reported while a pull runs: ops read so far and ops still on the cluster.
type Progress struct {
	Project string
	Done    int
	Left    int
}

// Pull fetches, for every shared project, the ops past its cursor, verifies each (signature,
// author name, tombstone rights), and applies them to the local replica. It returns how
// many ops it applied; progress, when set, hears after every batch.
func (t *Team) Pull(ctx context.Context, progress func(Progress)) (int, error) {
	t.syncMu.Lock()
	defer t.syncMu.Unlock()
	c, err := t.client()
	if err != nil {
		return 0, err
	}
	shared, err := t.shared(ctx)
	if err != nil {
		return 0, fmt.Errorf("team pull: %w", err)
	}
	total := 0
	for _, project := range shared {
		n, err := t.pullProject(ctx, c, project, progress)
		total += n
		if err != nil {
			return total, fmt.Errorf("team pull %s: %w", project, err)
		}
	}
	t.mu.Lock()
	t.pulled += total
	t.mu.Unlock()
	return total, nil
}

func (t *Team) pullProject(ctx context.Context, c *rq, project string, progress func(Progress)) (int, error) {
	var cursor int64
	if err := t.st.db.QueryRowContext(ctx, `SELECT pos FROM cursors WHERE project = ?`, project).Scan(&cursor); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	left := -1
	if progress != nil {
		if n, err := t.lagOf(ctx, c, project, cursor); err == nil {
			left = n
		}
	}
	done, read := 0, 0
	for {
		res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT pos, origin, tseq, project, kind, record_id, hlc, payload, payload_hash, author, sig
			FROM team_ops WHERE project = ? AND pos > ? ORDER BY pos LIMIT ?`, project, cursor, t.cfg.PullBatch)})
		if err != nil {
			return done, err
		}
		if len(res) == 0 || len(res[0].Values) == 0 {
			return done, nil
		}
		ops, err := decodeOps(res[0].Values)
		if err != nil {
			return done, err
		}
		n, err := t.applyPulled(ctx, ops)
		if err != nil {
			return done, err
		}
		done += n
		read += len(ops)
		cursor = ops[len(ops)-1].Pos
		if progress != nil {
			progress(Progress{Project: project, Done: read, Left: max(left-read, 0)})
		}
	}
}

func decodeOps(rows [][]any) ([]Op, error) {
	ops := make([]Op, 0, len(rows))
	for _, r := range rows {
		if len(r) != 11 {
			return nil, fmt.Errorf("team cluster: op row has %d columns", len(r))
		}
		pos, err := int64Of(r[0])
		if err != nil {
			return nil, err
		}
		tseq, err := int64Of(r[2])
		if err != nil {
			return nil, err
		}
		hlc, err := strconv.ParseUint(strOf(r[6]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("team cluster: op hlc: %w", err)
		}
		op := Op{Pos: pos, Origin: strOf(r[1]), TSeq: uint64(tseq), Project: strOf(r[3]), Kind: strOf(r[4]), RecordID: strOf(r[5]),
			HLC: hlc, PayloadHash: strOf(r[8]), Author: strOf(r[9]), Sig: strOf(r[10])}
		if r[7] != nil {
			op.Payload = []byte(strOf(r[7]))
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// applyPulled verifies ops and applies them in one replica transaction; then it records
// the authors, the rejections and the cursor. A crash in between pulls the batch again,
// which the replica drops as duplicates.
func (t *Team) applyPulled(ctx context.Context, ops []Op) (int, error) {
	admins := t.admins(ctx)
	tx, err := t.st.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var apply []replica.Op
	named := map[string]string{} // authors first seen in this batch
	for _, op := range ops {
		if op.Origin == t.origin {
			// Own op: the replica has it. A row under this device's name that this device
			// did not sign is a forgery all the same (Ed25519 signatures are deterministic:
			// the outbox holds the very bytes).
			var mine int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM outbox WHERE project = ? AND tseq = ? AND sig = ?`, op.Project, op.TSeq, op.Sig).Scan(&mine); err != nil {
				return 0, err
			}
			if mine > 0 {
				continue
			}
			if err := verify(op); err != nil {
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO rejected(pos, origin, tseq, kind, record_id, reason) VALUES (?, ?, ?, ?, ?, ?)`,
					op.Pos, op.Origin, op.TSeq, op.Kind, op.RecordID, err.Error()); err != nil {
					return 0, err
				}
			}
			continue
		}
		lop := replica.Op{Origin: LocalOrigin(op.Origin, op.Project), Seq: op.TSeq, HLC: op.HLC, Kind: op.Kind, RecordID: op.RecordID, Payload: op.Payload}
		forged, reason := t.check(ctx, tx, op, admins, named)
		if reason != "" {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO rejected(pos, origin, tseq, kind, record_id, reason) VALUES (?, ?, ?, ?, ?, ?)`,
				op.Pos, op.Origin, op.TSeq, op.Kind, op.RecordID, reason); err != nil {
				return 0, err
			}
			t.cfg.Logger.Warn("team op rejected", "origin", op.Origin, "tseq", op.TSeq, "kind", op.Kind, "record", op.RecordID, "reason", reason)
			if forged {
				continue // not the origin's op: its real op with this tseq is another row
			}
			lop.Kind, lop.Payload = kindRejected, nil // the origin's own op, refused: keep its place
		} else if op.Kind != replica.OpForget {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO records(id, origin, project) VALUES (?, ?, ?)`, op.RecordID, op.Origin, op.Project); err != nil {
				return 0, err
			}
		}
		apply = append(apply, lop)
	}
	applied := 0
	if len(apply) > 0 {
		res, err := t.cfg.Replica.ApplyOps(ctx, apply)
		if err != nil {
			return 0, fmt.Errorf("apply team ops: %w", err)
		}
		applied = res.Applied
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO cursors(project, pos) VALUES (?, ?) ON CONFLICT(project) DO UPDATE SET pos = excluded.pos`,
		ops[0].Project, ops[len(ops)-1].Pos); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	// The author's name becomes the device name of its origin here, so local search,
	// timeline and context tag the team's records with it.
	if dn, ok := t.cfg.Replica.(interface {
		SetDeviceName(ctx context.Context, origin, name string) error
	}); ok {
		for origin, author := range named {
			if err := dn.SetDeviceName(ctx, origin, "@"+author); err != nil {
				return applied, fmt.Errorf("name team author: %w", err)
			}
		}
	}
	return applied, nil
}

// check returns why op must be refused, or "", and whether it is forged (its signature does
// not verify: the origin never wrote it). The server is not trusted: a member with write
// access can insert any row, so every op proves its origin by signature, keeps the author
// name its origin first used, and a tombstone counts only from the record's author device or
// a pinned admin.
func (t *Team) check(ctx context.Context, tx *sql.Tx, op Op, admins []string, named map[string]string) (forged bool, reason string) {
	if err := verify(op); err != nil {
		return true, err.Error()
	}
	return false, t.checkRights(ctx, tx, op, admins, named)
}

func (t *Team) checkRights(ctx context.Context, tx *sql.Tx, op Op, admins []string, named map[string]string) string {
	var pinned string
	err := tx.QueryRowContext(ctx, `SELECT author FROM authors WHERE origin = ?`, op.Origin).Scan(&pinned)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, `INSERT INTO authors(origin, author) VALUES (?, ?)`, op.Origin, op.Author); err != nil {
			return "store author: " + err.Error()
		}
		named[op.Origin] = op.Author
	case err != nil:
		return "read author: " + err.Error()
	case pinned != op.Author:
		return fmt.Sprintf("device %s signs as %q, known as %q", op.Origin, op.Author, pinned)
	}
	if op.Kind != replica.OpForget && op.Kind != replica.OpSession {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT origin FROM records WHERE id = ?`, op.RecordID).Scan(&owner)
		if err == nil && owner != op.Origin {
			return fmt.Sprintf("record %s belongs to %s", op.RecordID, owner)
		}
		return ""
	}
	if op.Kind == replica.OpSession {
		return ""
	}
	var owner string
	err = tx.QueryRowContext(ctx, `SELECT origin FROM records WHERE id = ?`, op.RecordID).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Sprintf("tombstone for unknown record %s", op.RecordID)
	}
	if err != nil {
		return "read record: " + err.Error()
	}
	if owner != op.Origin && !slices.Contains(admins, op.Origin) {
		return fmt.Sprintf("tombstone for %s from %s, neither its author nor an admin", op.RecordID, op.Origin)
	}
	return ""
}

func (t *Team) lagOf(ctx context.Context, c *rq, project string, cursor int64) (int, error) {
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT COUNT(*) FROM team_ops WHERE project = ? AND pos > ?`, project, cursor)})
	if err != nil {
		return 0, err
	}
	return intOf(res[0].Values[0][0])
}

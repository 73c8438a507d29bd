package team

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// Holding. The replica refuses an op stamped more than its clock bound ahead of this
// device's clock (replica.DefaultMaxClockSkew: a member whose clock is fast), and with it
// the later ops of that op's stream, which would follow a gap. Team moves its cursor past
// them all the same and keeps those ops here, in `held`, by stream: each pull retries them
// from this file (never from the cluster), so they apply once this clock has caught up,
// while every other author's ops, in this project and the others, keep arriving. `team
// status` names each stalled author (Stalled). An op no clock can explain — more than
// Config.FarFuture ahead — is refused outright (checkFarFuture), and an op the replica
// cannot apply for another reason is refused on its own (applyEach): a refusal never
// stops more than its author's op.

// retryEvery is how often a pull retries the held ops: they wait for this clock to move.
const retryEvery = 2 * time.Second

// applyHolding applies ops (pos[i] is ops[i]'s cluster position) to the replica through
// tx's team state: what the replica did not take is held.
func (t *Team) applyHolding(ctx context.Context, tx *sql.Tx, q *batchStmts, ops []store.Op, pos []int64) (int, error) {
	res, err := t.cfg.Replica.ApplyOps(ctx, ops)
	if err != nil && !errors.Is(err, memory.ErrClockAhead) {
		return t.applyEach(ctx, tx, q, ops, pos)
	}
	if res.Applied+res.Duplicates == len(ops) {
		return res.Applied, nil
	}
	return res.Applied, t.hold(ctx, tx, ops, pos)
}

// applyEach applies ops one at a time after their batch failed: an op the replica cannot
// apply (a payload it cannot read) is refused and keeps its place as a placeholder.
func (t *Team) applyEach(ctx context.Context, tx *sql.Tx, q *batchStmts, ops []store.Op, pos []int64) (int, error) {
	applied := 0
	for i, op := range ops {
		res, err := t.cfg.Replica.ApplyOps(ctx, []store.Op{op})
		if err != nil && !errors.Is(err, memory.ErrClockAhead) {
			origin, _ := splitLocal(op.Origin)
			reason := "the replica cannot apply it: " + err.Error()
			if _, err := q.reject.ExecContext(ctx, pos[i], origin, op.Seq, op.Kind, op.RecordID, reason); err != nil {
				return applied, err
			}
			t.cfg.Logger.Warn("team op rejected", "origin", origin, "tseq", op.Seq, "kind", op.Kind, "record", op.RecordID, "reason", reason)
			if res, err = t.cfg.Replica.ApplyOps(ctx, []store.Op{{Origin: op.Origin, Seq: op.Seq, Kind: kindRejected, RecordID: op.RecordID}}); err != nil {
				return applied, err
			}
		}
		applied += res.Applied
	}
	return applied, t.hold(ctx, tx, ops, pos)
}

// hold keeps the ops of ops the replica has not applied (past their stream's version).
func (t *Team) hold(ctx context.Context, tx *sql.Tx, ops []store.Op, pos []int64) error {
	vv, err := t.cfg.Replica.VersionVector(ctx)
	if err != nil {
		return err
	}
	for i, op := range ops {
		if op.Seq <= vv[op.Origin] {
			continue
		}
		origin, project := splitLocal(op.Origin)
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO held(local_origin, seq, pos, origin, project, kind, record_id, hlc, payload)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, op.Origin, op.Seq, pos[i], origin, project, op.Kind, op.RecordID, int64(op.HLC), op.Payload); err != nil {
			return err
		}
	}
	return nil
}

// retryHeld applies what the replica takes now of project's held ops, every retryEvery.
func (t *Team) retryHeld(ctx context.Context, project string) (int, error) {
	if last, ok := t.retried[project]; ok && t.cfg.Now().Sub(last) < retryEvery {
		return 0, nil
	}
	t.retried[project] = t.cfg.Now()
	streams, err := t.st.list(ctx, `SELECT DISTINCT local_origin FROM held WHERE project = ?`, project)
	if err != nil || len(streams) == 0 {
		return 0, err
	}
	total := 0
	for _, lo := range streams {
		n, err := t.retryStream(ctx, lo)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func (t *Team) retryStream(ctx context.Context, lo string) (int, error) {
	tx, err := t.st.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT seq, pos, kind, record_id, hlc, payload FROM held WHERE local_origin = ? ORDER BY seq LIMIT ?`, lo, t.cfg.PullBatch)
	if err != nil {
		return 0, err
	}
	var ops []store.Op
	var pos []int64
	for rows.Next() {
		op := store.Op{Origin: lo}
		var p, hlc int64
		if err := rows.Scan(&op.Seq, &p, &op.Kind, &op.RecordID, &hlc, &op.Payload); err != nil {
			rows.Close()
			return 0, err
		}
		op.HLC = uint64(hlc)
		ops, pos = append(ops, op), append(pos, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	q, err := prepareBatch(ctx, tx)
	if err != nil {
		return 0, err
	}
	defer q.close()
	n, err := t.applyHolding(ctx, tx, q, ops, pos)
	if err != nil {
		return n, err
	}
	vv, err := t.cfg.Replica.VersionVector(ctx)
	if err != nil {
		return n, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM held WHERE local_origin = ? AND seq <= ?`, lo, int64(vv[lo])); err != nil {
		return n, err
	}
	return n, tx.Commit()
}

// splitLocal is LocalOrigin's inverse: the author device and the project of a stream.
func splitLocal(lo string) (origin, project string) {
	origin, project, _ = strings.Cut(strings.TrimPrefix(lo, "team:"), ":")
	return origin, project
}

// checkFarFuture refuses an op (or the record it carries) stamped more than FarFuture
// ahead of this device's clock: held, it would stall its author's stream for good.
func (t *Team) checkFarFuture(op Op) string {
	limit := t.cfg.Now().Add(t.cfg.FarFuture)
	stamps := []uint64{op.HLC}
	if op.Payload != nil && op.Kind != store.OpForget {
		var h payloadHead
		if json.Unmarshal(op.Payload, &h) == nil && h.HLC != 0 {
			stamps = append(stamps, h.HLC)
		}
	}
	for _, s := range stamps {
		if at := store.HLCTime(s); at.After(limit) {
			return fmt.Sprintf("stamped %s, more than %s ahead of this device's clock", at.UTC().Format("2006-01-02 15:04 UTC"), t.cfg.FarFuture)
		}
	}
	return ""
}

// Stall is one author's stream in one project that waits for this device's clock: its
// first held op is stamped ahead of it.
type Stall struct {
	Author  string `json:"author"`
	Project string `json:"project"`
	Held    int    `json:"held"`   // ops of the stream kept here, not applied yet
	Reason  string `json:"reason"` // what the first held op waits for
}

func (t *Team) stalls(ctx context.Context) ([]Stall, error) {
	rows, err := t.st.db.QueryContext(ctx, `SELECT origin, project, COUNT(*), (SELECT hlc FROM held h2 WHERE h2.local_origin = held.local_origin ORDER BY seq LIMIT 1)
		FROM held GROUP BY local_origin ORDER BY origin, project`)
	if err != nil {
		return nil, err
	}
	var out []Stall
	var origins []string
	now := t.cfg.Now()
	for rows.Next() {
		var s Stall
		var origin string
		var hlc int64
		if err := rows.Scan(&origin, &s.Project, &s.Held, &hlc); err != nil {
			rows.Close()
			return nil, err
		}
		at := store.HLCTime(uint64(hlc))
		s.Reason = fmt.Sprintf("its op stamped %s is %s ahead of this device's clock (the author's clock is fast?); its ops apply once this clock gets there",
			at.UTC().Format("2006-01-02 15:04:05 UTC"), at.Sub(now).Round(time.Second))
		out, origins = append(out, s), append(origins, origin)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Author = t.nameOf(ctx, origins[i])
	}
	return out, nil
}

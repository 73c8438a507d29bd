package replica

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"slices"
	"strings"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/memory"
)

// opWriter appends local ops inside one transaction.
type opWriter struct {
	r        *Replica
	tx       *wtx
	nextSeq  uint64
	loaded   bool
	appended bool // ops appended since the last flush
}

func (w *opWriter) append(ctx context.Context, kind, recordID, project string, hlc uint64, payload []byte) error {
	return w.add(ctx, kind, recordID, project, hlc, payload, false)
}

// add appends one op; inRow stores it without its payload, which OpsSince rebuilds from the
// record's row (oplog_inrow.go).
func (w *opWriter) add(ctx context.Context, kind, recordID, project string, hlc uint64, payload []byte, inRow bool) error {
	if err := checkRecordSize(kind, recordID, payload); err != nil {
		return err // one limit for every record, replicated or local-only
	}
	if project != "" && w.r.cfg.LocalOnly(project) {
		return nil // local-only projects produce no ops: nothing of them can leave the device
	}
	if !w.loaded {
		var seq sql.NullInt64
		err := w.tx.QueryRowContext(ctx, "SELECT seq FROM version_vector WHERE origin = ?", w.r.cfg.Origin).Scan(&seq)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("read own seq: %w", err)
		}
		w.nextSeq = uint64(seq.Int64) + 1
		w.loaded = true
	}
	stored, flag := payload, 0
	if inRow {
		stored, flag = nil, 1
	}
	origin, err := w.tx.originID(ctx, w.r.cfg.Origin)
	if err != nil {
		return fmt.Errorf("append op: %w", err)
	}
	if _, err := w.tx.ExecContext(ctx, "INSERT INTO ops(origin_id, seq, hlc, kind, record_id, payload, inrow) VALUES (?, ?, ?, ?, ?, ?, ?)",
		origin, w.nextSeq, hlc, kind, recordID, stored, flag); err != nil {
		return fmt.Errorf("append op: %w", err)
	}
	w.nextSeq++
	w.appended = true
	w.tx.change.LocalOps = true
	return nil
}

// flush records the last seq appended in the version vector. runTx calls it before every
// commit, so the vector and the op-log can never disagree.
func (w *opWriter) flush(ctx context.Context) error {
	if !w.appended {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO version_vector(origin, seq) VALUES (?, ?)
		ON CONFLICT(origin) DO UPDATE SET seq = excluded.seq`, w.r.cfg.Origin, w.nextSeq-1); err != nil {
		return fmt.Errorf("advance own seq: %w", err)
	}
	w.appended = false
	return nil
}

// VersionVector returns the replica's version vector.
func (r *Replica) VersionVector(ctx context.Context) (store.VersionVector, error) {
	return readVersionVector(ctx, r.r)
}

// rowsQuerier is what readVersionVector reads through: the read pool or a transaction.
type rowsQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readVersionVector reads the version vector through q (in a transaction: of its snapshot).
func readVersionVector(ctx context.Context, q rowsQuerier) (store.VersionVector, error) {
	rows, err := q.QueryContext(ctx, "SELECT origin, seq FROM version_vector")
	if err != nil {
		return nil, fmt.Errorf("version vector: %w", err)
	}
	defer rows.Close()
	vv := store.VersionVector{}
	for rows.Next() {
		var o string
		var s int64
		if err := rows.Scan(&o, &s); err != nil {
			return nil, fmt.Errorf("version vector: %w", err)
		}
		vv[o] = uint64(s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("version vector: %w", err)
	}
	return vv, nil
}

// OpsSince returns up to limit ops of origin with seq > after, in seq order, contiguous up
// to this replica's version-vector entry: a seq whose op was compacted away (Compact) comes
// back as a placeholder of kind OpCompacted, with no record and no payload, so a receiver's
// strictly-in-order delivery rule moves past it (see DESIGN.md, "Compaction").
func (r *Replica) OpsSince(ctx context.Context, origin string, after uint64, limit int) ([]store.Op, error) {
	// One read transaction: the vector entry and the rows are of the same snapshot, so a
	// hole is always a compacted op, never one written (or cut) in between.
	tx, err := r.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("ops since: %w", err)
	}
	defer tx.Rollback()
	var top sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT seq FROM version_vector WHERE origin = ?", origin).Scan(&top); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("ops since: %w", err)
	}
	last := uint64(top.Int64)
	if last <= after || limit <= 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT ?1, seq, hlc, kind, record_id, payload, inrow FROM ops
		WHERE origin_id = `+originIDOf+` AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4`, origin, after, last, limit)
	if err != nil {
		return nil, fmt.Errorf("ops since: %w", err)
	}
	defer rows.Close()
	var out []store.Op
	next := after + 1
	fill := func(to uint64) { // placeholders for the compacted seqs before to
		for ; next < to && len(out) < limit; next++ {
			out = append(out, store.Op{Origin: origin, Seq: next, Kind: store.OpCompacted})
		}
	}
	var inRow []int // indexes in out of ops whose payload is in their record's row
	for rows.Next() {
		var op store.Op
		var seq, hlc int64
		var flag bool
		if err := rows.Scan(&op.Origin, &seq, &hlc, &op.Kind, &op.RecordID, &op.Payload, &flag); err != nil {
			return nil, fmt.Errorf("ops since: %w", err)
		}
		op.Seq, op.HLC = uint64(seq), uint64(hlc)
		fill(op.Seq)
		if flag {
			inRow = append(inRow, len(out))
		}
		if len(out) >= limit {
			break
		}
		out = append(out, op)
		next = op.Seq + 1
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ops since: %w", err)
	}
	fill(last + 1)
	rows.Close()
	reads := r.reads.inTx(tx)
	for _, i := range inRow {
		if i < len(out) {
			if err := materialize(ctx, reads, &out[i]); err != nil {
				return nil, fmt.Errorf("ops since: %w", err)
			}
		}
	}
	return out, nil
}

// ApplyOps applies remote ops idempotently in one transaction. Ops of an origin must arrive
// in seq order; an op past a gap is skipped (and fetched again by the next anti-entropy
// round), so the version vector always means "everything up to here". A removed origin's
// ops past its cut-off are dropped (admitOps). An op stamped too far ahead of this clock is
// refused (with the rest of its origin's batch); the others are applied and committed, and
// the error, wrapping memory.ErrClockAhead, says what was refused.
func (r *Replica) ApplyOps(ctx context.Context, ops []store.Op) (store.ApplyResult, error) {
	var res store.ApplyResult
	forgets := 0
	mode := modeDurable
	for _, op := range ops {
		if op.Kind == store.OpForget {
			mode = modeForget
			break
		}
	}
	for _, op := range ops {
		if op.Origin == "" || op.Seq == 0 {
			return store.ApplyResult{}, fmt.Errorf("apply op: %w", store.ErrBadOp)
		}
	}
	var ahead error
	err := r.writeTxMode(ctx, mode, func(tx *wtx) error {
		forgets, ahead = 0, nil
		tx.change.Origin = feed.Device
		if err := tx.deferIndexing(ctx); err != nil {
			return err
		}
		// Facts: the version vector of every origin in the batch. Plan: which ops are the
		// next contiguous seqs (selectOps, pure). Execute: apply those, advance the vector.
		known := store.VersionVector{}
		cuts := map[string]uint64{} // removed origins' cut-offs (CutOrigin)
		for _, op := range ops {
			if _, ok := known[op.Origin]; ok {
				continue
			}
			var s sql.NullInt64
			if err := tx.QueryRowContext(ctx, "SELECT seq FROM version_vector WHERE origin = ?", op.Origin).Scan(&s); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("apply op: %w", err)
			}
			known[op.Origin] = uint64(s.Int64)
			cut, has, err := originCut(ctx, tx, op.Origin)
			if err != nil {
				return err
			}
			if has {
				cuts[op.Origin] = cut
			}
		}
		var refused store.ApplyResult
		kept := r.admitOps(ops, cuts, &refused, &ahead)
		next, vv, sel := selectOps(kept, known)
		res = sel
		res.Cut, res.Ahead, res.Gaps = refused.Cut, refused.Ahead, res.Gaps+refused.Gaps
		for _, op := range next {
			if err := r.applyOne(ctx, tx, op); err != nil {
				return fmt.Errorf("apply op %s/%d: %w", op.Origin, op.Seq, err)
			}
			if op.Kind == store.OpForget {
				forgets++
			}
			r.clock.Observe(op.HLC)
		}
		for o, s := range vv {
			if _, err := tx.ExecContext(ctx, `INSERT INTO version_vector(origin, seq) VALUES (?, ?)
				ON CONFLICT(origin) DO UPDATE SET seq = excluded.seq WHERE excluded.seq > version_vector.seq`, o, s); err != nil {
				return fmt.Errorf("apply op: %w", err)
			}
		}
		return nil
	})
	if err == nil && forgets > 0 {
		err = r.purgeWAL(ctx)
	}
	if err == nil && ahead != nil {
		err = fmt.Errorf("apply ops: %d refused: %w", res.Ahead, ahead)
	}
	return res, err
}

// admitOps drops, before the delivery rule runs, the ops this replica refuses: a removed
// origin's ops past its cut-off (counted in Cut: never stored, never relayed), and an op
// stamped too far ahead of this clock (counted in Ahead, its error kept in *ahead) together
// with its origin's later ops in the batch (counted as gaps: fetched again later). One
// absurd stamp must neither drag this clock nor hold up the other origins.
func (r *Replica) admitOps(ops []store.Op, cuts map[string]uint64, res *store.ApplyResult, ahead *error) []store.Op {
	kept := make([]store.Op, 0, len(ops))
	blocked := map[string]bool{}
	for _, op := range ops {
		if cut, removed := cuts[op.Origin]; removed && op.Seq > cut {
			res.Cut++
			continue
		}
		if blocked[op.Origin] {
			res.Gaps++
			continue
		}
		if err := r.checkOpStamps(op); err != nil {
			res.Ahead++
			if *ahead == nil {
				*ahead = err
			}
			blocked[op.Origin] = true
			continue
		}
		kept = append(kept, op)
	}
	return kept
}

// selectOps is the delivery rule of the op-log, without a database: given the version
// vector known before the batch, an op whose seq is at or below its origin's entry is a
// duplicate, one past the next seq is beyond a gap (fetched again by the next anti-entropy
// round), and the next seq is applied and moves the entry on. It returns the ops to apply,
// in batch order, the vector after them (an entry for every origin in the batch), and the
// counts.
func selectOps(ops []store.Op, known store.VersionVector) (next []store.Op, after store.VersionVector, res store.ApplyResult) {
	after = store.VersionVector{}
	for _, op := range ops {
		cur, ok := after[op.Origin]
		if !ok {
			cur = known[op.Origin]
		}
		switch {
		case op.Seq <= cur:
			res.Duplicates++
		case op.Seq > cur+1:
			res.Gaps++
		default:
			next = append(next, op)
			res.Applied++
			cur = op.Seq
		}
		after[op.Origin] = cur
	}
	return next, after, res
}

func (r *Replica) applyOne(ctx context.Context, tx *wtx, op store.Op) error {
	if op.Kind == store.OpCompacted {
		return nil // the seq moves the version vector on; there is nothing to hold
	}
	if op.Kind == store.OpObservation && op.Payload != nil {
		// Decoded once, checked against the tombstones once (the record, its own ID, its
		// session): the most common op, and a catch-up applies thousands of them.
		if o, err := decodeObservation(op.Payload); err == nil {
			dead, err := isTombstoned(ctx, tx, op.RecordID, o.ID, o.SessionID)
			if err != nil {
				return err
			}
			if !dead {
				return r.applyObservation(ctx, tx, op, o, storeObservation)
			}
		} // else the rules below, as for every op
	}
	var peek struct {
		SessionID string `json:"session_id"`
	}
	if op.Kind != store.OpSession && op.Kind != store.OpForget {
		_ = json.Unmarshal(op.Payload, &peek) // best effort: a bad payload fails below
	}
	dead, err := isTombstoned(ctx, tx, op.RecordID, peek.SessionID)
	if err != nil {
		return err
	}
	payload := op.Payload
	if dead && op.Kind != store.OpForget {
		payload = nil // never store, or relay, content of a forgotten record
	}
	if op.Kind == store.OpObservation && payload != nil {
		o, err := decodeObservation(payload)
		if err != nil {
			return err
		}
		return r.applyObservation(ctx, tx, op, o, insertObservation)
	}
	if (op.Kind == store.OpPrompt || op.Kind == store.OpSummary) && payload != nil {
		return r.applyStored(ctx, tx, op)
	}
	origin, err := tx.originID(ctx, op.Origin)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO ops(origin_id, seq, hlc, kind, record_id, payload) VALUES (?, ?, ?, ?, ?, ?)",
		origin, op.Seq, op.HLC, op.Kind, op.RecordID, payload); err != nil {
		return err
	}
	if payload == nil && op.Kind != store.OpForget {
		return nil
	}
	if err := r.applyPayload(ctx, tx, op, payload); err != nil {
		return err
	}
	switch op.Kind {
	case store.OpSession, store.OpPrompt, store.OpObservation, store.OpSummary:
		tx.record(op.Kind, op.RecordID)
	case store.OpDevice:
		tx.record(store.OpDevice, strings.TrimPrefix(op.RecordID, "device:"))
	case store.OpForget:
		var f forgetPayload
		_ = json.Unmarshal(payload, &f) // applyPayload decoded it
		tx.record(store.OpForget, f.ID)
	}
	return nil
}

// applyObservation stores a remote observation o, decoded from op's payload, with insert
// (storeObservation when applyOne found no tombstone for it, else insertObservation), and
// its op, the op without its payload when the new row rebuilds it byte for byte
// (oplog_inrow.go).
func (r *Replica) applyObservation(ctx context.Context, tx *wtx, op store.Op, o memory.Observation,
	insert func(context.Context, *wtx, *memory.Observation) (bool, error)) error {
	o.Origin, o.HLC = stamp(o.Origin, o.HLC, op)
	stored, err := insert(ctx, tx, &o)
	if err != nil {
		return err
	}
	return insertAppliedOp(ctx, tx, op, stored && o.ID == op.RecordID && bytes.Equal(rowPayload(o), op.Payload))
}

// applyStored stores a remote prompt or summary, decoded from op's payload (applyOne found
// no tombstone for its record), and its op: without its payload when the new row rebuilds
// it byte for byte. A payload this build would encode otherwise (a newer device's fields,
// another key order, an omitted origin) keeps its bytes.
func (r *Replica) applyStored(ctx context.Context, tx *wtx, op store.Op) error {
	var id string
	var stored bool
	var rebuilt []byte
	switch op.Kind {
	case store.OpPrompt:
		p, err := decodePrompt(op.Payload)
		if err != nil {
			return err
		}
		p.Origin, p.HLC = stamp(p.Origin, p.HLC, op)
		if stored, err = insertPrompt(ctx, tx, p); err != nil {
			return err
		}
		id, rebuilt = p.ID, encodePrompt(p)
	case store.OpSummary:
		s, err := decodeSummary(op.Payload)
		if err != nil {
			return err
		}
		s.Origin, s.HLC = stamp(s.Origin, s.HLC, op)
		if stored, err = insertSummary(ctx, tx, s); err != nil {
			return err
		}
		id, rebuilt = s.ID, encodeSummary(s)
	default:
		return fmt.Errorf("apply %s op: its payload is not kept in a row", op.Kind)
	}
	return insertAppliedOp(ctx, tx, op, stored && id == op.RecordID && bytes.Equal(rebuilt, op.Payload))
}

// insertAppliedOp stores a remote op whose record was just applied: without its payload
// when inRow (the record's new row rebuilds it byte for byte, oplog_inrow.go).
func insertAppliedOp(ctx context.Context, tx *wtx, op store.Op, inRow bool) error {
	payload, flag := op.Payload, 0
	if inRow {
		payload, flag = nil, 1
	}
	origin, err := tx.originID(ctx, op.Origin)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO ops(origin_id, seq, hlc, kind, record_id, payload, inrow) VALUES (?, ?, ?, ?, ?, ?, ?)",
		origin, op.Seq, op.HLC, op.Kind, op.RecordID, payload, flag); err != nil {
		return err
	}
	tx.record(op.Kind, op.RecordID)
	return nil
}

// applyPayload applies one op's content through the insert functions local writes use
// (an observation's, stored with its op, is applyObservation).
func (r *Replica) applyPayload(ctx context.Context, tx *wtx, op store.Op, payload []byte) error {
	switch op.Kind {
	case store.OpSession:
		s, err := decodeSession(payload)
		if err != nil {
			return err
		}
		s.Origin, s.HLC = stamp(s.Origin, s.HLC, op)
		return upsertSession(ctx, tx, s)
	case store.OpPrompt:
		p, err := decodePrompt(payload)
		if err != nil {
			return err
		}
		p.Origin, p.HLC = stamp(p.Origin, p.HLC, op)
		_, err = insertPrompt(ctx, tx, p)
		return err
	case store.OpSummary:
		s, err := decodeSummary(payload)
		if err != nil {
			return err
		}
		s.Origin, s.HLC = stamp(s.Origin, s.HLC, op)
		_, err = insertSummary(ctx, tx, s)
		return err
	case store.OpDevice:
		d, err := decodeDevice(payload)
		if err != nil {
			return err
		}
		return upsertDevice(ctx, tx, d, op.HLC, op.Origin)
	case store.OpForget:
		id, err := decodeForget(payload)
		if err != nil {
			return err
		}
		return forgetTx(ctx, tx, id, op.HLC, op.Origin)
	case store.OpSupersede:
		return applySupersede(ctx, tx, op, payload)
	case store.OpPin:
		return applyPin(ctx, tx, op, payload)
	default:
		// An op kind from a newer version: keep it (it relays) but do not interpret it.
		return nil
	}
}

// stamp returns a record's origin and HLC: those carried in its payload (an imported record
// keeps the device or tool it came from), else the op's. Every replica applies the same
// payload, so either way they agree.
func stamp(origin string, hlc uint64, op store.Op) (string, uint64) {
	if origin == "" {
		origin = op.Origin
	}
	if hlc == 0 {
		hlc = op.HLC
	}
	return origin, hlc
}

// isTombstoned reports whether any of ids (empty ones ignored) has a tombstone, in one
// lookup of up to three IDs (a record, its session, and a payload's own ID).
func isTombstoned(ctx context.Context, tx *wtx, ids ...string) (bool, error) {
	var in [3]string
	n := 0
	for _, id := range ids {
		if id == "" || slices.Contains(in[:n], id) {
			continue
		}
		if n == len(in) {
			return false, fmt.Errorf("tombstone lookup: more than %d IDs", len(in))
		}
		in[n] = id
		n++
	}
	if n == 0 {
		return false, nil
	}
	for i := n; i < len(in); i++ {
		in[i] = in[0] // one statement for any count: repeating an ID changes nothing
	}
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM tombstones WHERE id IN (?, ?, ?) LIMIT 1", in[0], in[1], in[2]).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("tombstone lookup: %w", err)
	}
	return true, nil
}

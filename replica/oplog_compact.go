package replica

import (
	"context"
	"fmt"
	"github.com/memnode/memnode/store"
)

// Compact deletes from the op-log the ops that no longer change any state, among those at or
// below floor (floor[origin] is a seq every member of the group already holds; sync computes
// it from the version vectors the members announced). Two kinds of ops go:
//
//   - an op of a forgotten record (payload NULL and not kept in its row, kind not forget;
//     forgetting a record clears inrow): it applies nothing
//     anywhere; the forget op and its tombstone stay, so a later copy is still dropped;
//   - a session or device op that lost its LWW register to another op, when that winner
//     (and, for a session, an op carrying the session's earliest started_at) is also at or
//     below floor: the winner stays in the log, so the register comes out the same for a
//     replica that never saw the loser. The winner being below floor matters: only an op
//     every member holds is safe from a removal cut-off (CutOrigin), which could otherwise
//     delete the winner and leave a register without the loser it would fall back to.
//
// A compacted seq is served by OpsSince as an OpCompacted placeholder, so the delivery rule
// (contiguous seqs per origin) is unchanged. Ops of kinds this build does not know are
// never compacted. See DESIGN.md, "Compaction".
func (r *Replica) Compact(ctx context.Context, floor store.VersionVector) (store.CompactResult, error) {
	var res store.CompactResult
	if len(floor) == 0 {
		return res, nil
	}
	err := r.writeTx(ctx, func(tx *wtx) error {
		res = store.CompactResult{}
		for origin, seq := range floor {
			if seq == 0 {
				continue
			}
			n, err := tx.ExecContext(ctx, `DELETE FROM ops WHERE origin_id = `+originIDOf+` AND seq <= ?2 AND payload IS NULL AND inrow = 0
				AND kind IN ('session', 'prompt', 'observation', 'summary', 'device')`, origin, seq)
			if err != nil {
				return fmt.Errorf("compact forgotten: %w", err)
			}
			k, _ := n.RowsAffected()
			res.Forgotten += int(k)
		}
		losers, err := supersededOps(ctx, tx, floor)
		if err != nil {
			return err
		}
		for _, l := range losers {
			if _, err := tx.ExecContext(ctx, "DELETE FROM ops WHERE origin_id = "+originIDOf+" AND seq = ?2", l.origin, l.seq); err != nil {
				return fmt.Errorf("compact superseded: %w", err)
			}
		}
		res.Superseded = len(losers)
		return nil
	})
	if err != nil {
		return store.CompactResult{}, fmt.Errorf("compact op-log: %w", err)
	}
	return res, nil
}

// opKey names one op.
type opKey struct {
	origin string
	seq    uint64
}

// registerOp is one op of an LWW register (a session or a device name) as the compaction
// rule needs it: its key, the stamp it writes and, for a session, its started_at.
type registerOp struct {
	opKey
	stampOrigin string
	stampHLC    uint64
	startedAt   int64
}

// supersededOps returns the session and device ops at or below floor that lost their
// register to an op also at or below floor.
func supersededOps(ctx context.Context, tx *wtx, floor store.VersionVector) ([]opKey, error) {
	type register struct {
		winOrigin string
		winHLC    uint64
		startedAt int64 // the session's stored started_at (the minimum of its ops')
		ops       []registerOp
	}
	regs := map[string]*register{}
	var order []string
	rows, err := tx.QueryContext(ctx, `SELECT `+opsOrigin+`, o.seq, o.hlc, o.record_id, o.payload, s.origin, s.hlc, s.started_at
		FROM ops o JOIN sessions s ON s.id = o.record_id WHERE o.kind = 'session' AND o.payload IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("compact sessions: %w", err)
	}
	for rows.Next() {
		var op store.Op
		var seq, hlc, winHLC, started int64
		var winOrigin string
		if err := rows.Scan(&op.Origin, &seq, &hlc, &op.RecordID, &op.Payload, &winOrigin, &winHLC, &started); err != nil {
			rows.Close()
			return nil, fmt.Errorf("compact sessions: %w", err)
		}
		op.Seq, op.HLC, op.Kind = uint64(seq), uint64(hlc), store.OpSession
		s, err := decodeSession(op.Payload)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("compact sessions: %w", err)
		}
		so, sh := stamp(s.Origin, s.HLC, op)
		reg := regs[op.RecordID]
		if reg == nil {
			reg = &register{winOrigin: winOrigin, winHLC: uint64(winHLC), startedAt: started}
			regs[op.RecordID] = reg
			order = append(order, op.RecordID)
		}
		reg.ops = append(reg.ops, registerOp{opKey{op.Origin, op.Seq}, so, sh, s.StartedAt})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compact sessions: %w", err)
	}
	rows, err = tx.QueryContext(ctx, `SELECT `+opsOrigin+`, o.seq, o.hlc, o.record_id, d.writer, d.hlc
		FROM ops o JOIN devices d ON o.record_id = 'device:' || d.origin WHERE o.kind = 'device' AND o.payload IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("compact devices: %w", err)
	}
	for rows.Next() {
		var origin, id, writer string
		var seq, hlc, winHLC int64
		if err := rows.Scan(&origin, &seq, &hlc, &id, &writer, &winHLC); err != nil {
			rows.Close()
			return nil, fmt.Errorf("compact devices: %w", err)
		}
		reg := regs[id]
		if reg == nil {
			reg = &register{winOrigin: writer, winHLC: uint64(winHLC)}
			regs[id] = reg
			order = append(order, id)
		}
		// A device op's stamp is the op's own (upsertDevice's writer and hlc).
		reg.ops = append(reg.ops, registerOp{opKey{origin, uint64(seq)}, origin, uint64(hlc), 0})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("compact devices: %w", err)
	}
	passed := func(k opKey) bool { return k.seq <= floor[k.origin] }
	var out []opKey
	for _, id := range order {
		reg := regs[id]
		if len(reg.ops) < 2 {
			continue
		}
		// Kept: every op writing the winning stamp, and one op carrying the stored
		// started_at (the register's minimum) unless a winner already does.
		keep := map[opKey]bool{}
		startKept := false
		for _, op := range reg.ops {
			if op.stampOrigin == reg.winOrigin && op.stampHLC == reg.winHLC {
				keep[op.opKey] = true
				startKept = startKept || op.startedAt == reg.startedAt
			}
		}
		if len(keep) == 0 {
			continue // the stored value is no op's here (cannot happen; keep everything)
		}
		for _, op := range reg.ops {
			if !startKept && op.startedAt == reg.startedAt {
				keep[op.opKey], startKept = true, true
			}
		}
		stable := true
		for k := range keep {
			stable = stable && passed(k)
		}
		if !stable {
			continue // a winner some member may still lack could yet be cut
		}
		for _, op := range reg.ops {
			if !keep[op.opKey] && passed(op.opKey) {
				out = append(out, op.opKey)
			}
		}
	}
	return out, nil
}

package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"

	"github.com/memnode/memnode/memory"
)

// What a local commit means is decided apart from how it runs (see DESIGN.md, "Meaning and
// execution"): readCommitFacts reads the little a commit must know of the stored state,
// planCommit turns a batch and those facts into the records and ops to store — a pure
// function of its inputs — and Commit executes the plan in one transaction. A backend with
// only atomic statement batches reads the same facts, makes the same plan and sends it as
// one batch.

// commitFacts is what planning a local commit needs to know of the stored state.
type commitFacts struct {
	// tombstoned holds the batch's session IDs that were forgotten: nothing is stored in
	// them again.
	tombstoned map[string]bool
	// stored holds contentKey of the batch's observations already stored.
	stored map[string]bool
	// stale is a session whose state changed since its events were claimed (Batch.Claimed),
	// or "": the batch was built from what a forget has since removed.
	stale string
}

func contentKey(sessionID, hash string) string { return sessionID + "\x00" + hash }

// plannedOp is one op a commit appends; its seq is given when it is written (contiguous
// after this origin's last).
type plannedOp struct {
	kind, recordID, project string
	hlc                     uint64
	payload                 []byte
}

// commitPlan is a local commit's meaning: every record stamped (HLC, origin) and given its
// global ID and content hash, each with the op that replicates it, in op order; records that
// are duplicates or belong to forgotten sessions are left out.
type commitPlan struct {
	sessions     []plannedSession
	prompts      []plannedPrompt
	observations []plannedObservation
	summaries    []plannedSummary
	duplicates   int
}

type (
	plannedSession struct {
		s  memory.Session
		op plannedOp
	}
	plannedPrompt struct {
		p  memory.Prompt
		op plannedOp
	}
	plannedObservation struct {
		o  memory.Observation
		op plannedOp
	}
	plannedSummary struct {
		s  memory.Summary
		op plannedOp
	}
)

// readCommitFacts reads, inside tx, the facts planCommit needs for b.
func readCommitFacts(ctx context.Context, tx *wtx, b *store.Batch) (commitFacts, error) {
	f := commitFacts{tombstoned: map[string]bool{}, stored: map[string]bool{}}
	sessions := map[string]bool{}
	for _, s := range b.Sessions {
		sessions[s.ID] = true
	}
	for _, p := range b.Prompts {
		sessions[p.SessionID] = true
	}
	for _, o := range b.Observations {
		sessions[o.SessionID] = true
	}
	for _, s := range b.Summaries {
		sessions[s.SessionID] = true
	}
	for id := range sessions {
		dead, err := isTombstoned(ctx, tx, id)
		if err != nil {
			return f, err
		}
		f.tombstoned[id] = dead
	}
	for _, base := range b.Claimed {
		if f.tombstoned[base.SessionID] {
			continue // a forgotten session's records are all left out anyway
		}
		now, err := sessionStateTx(ctx, tx, base.SessionID)
		if err != nil {
			return f, err
		}
		if now != base {
			f.stale = base.SessionID
			break
		}
	}
	for i := range b.Observations {
		o := &b.Observations[i]
		hash := o.HashContent()
		var one int
		err := tx.QueryRowContext(ctx, dedupQuery, hashValue(hash), o.SessionID).Scan(&one)
		switch {
		case err == nil:
			f.stored[contentKey(o.SessionID, hash)] = true
		case !errors.Is(err, sql.ErrNoRows):
			return f, fmt.Errorf("dedup observation: %w", err)
		}
	}
	return f, nil
}

// dedupQuery finds a session's observation with a content hash (its stored form, ?1):
// through observations_hash, the session and the hash's first 4 bytes (migration 19; the
// expression must be the index's own for the planner to use it), the whole hash checked in
// the row.
const dedupQuery = "SELECT 1 FROM observations WHERE session_id = ?2 AND substr(content_hash, 1, 4) = substr(?1, 1, 4) AND content_hash = ?1"

// mintedTombstoned returns which of the record IDs p minted carry a tombstone, in one
// read. With planCommit having left out the records of forgotten sessions (their
// tombstones read with the facts, in the same transaction), it is the rest of what
// insertPrompt, insertObservation and insertSummary check one record at a time.
func mintedTombstoned(ctx context.Context, tx *wtx, p commitPlan) (map[string]bool, error) {
	ids := make([]string, 0, len(p.prompts)+len(p.observations)+len(p.summaries))
	for _, pp := range p.prompts {
		ids = append(ids, pp.p.ID)
	}
	for _, po := range p.observations {
		ids = append(ids, po.o.ID)
	}
	for _, ps := range p.summaries {
		ids = append(ids, ps.s.ID)
	}
	return tombstonedAmong(ctx, tx, ids)
}

// tombstonedAmong returns which of ids carry a tombstone, in one read.
func tombstonedAmong(ctx context.Context, tx *wtx, ids []string) (map[string]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := tx.QueryContext(ctx, "SELECT id FROM tombstones WHERE id IN (SELECT value FROM json_each(?))", string(mustJSON(ids)))
	if err != nil {
		return nil, fmt.Errorf("tombstone lookup: %w", err)
	}
	defer rows.Close()
	dead := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("tombstone lookup: %w", err)
		}
		dead[id] = true
	}
	return dead, rows.Err()
}

// planCommit decides what committing b means, given the facts read for it: now mints HLC
// stamps (strictly increasing), origin is this device. It touches no database.
func planCommit(b *store.Batch, f commitFacts, now func() uint64, origin string) commitPlan {
	var p commitPlan
	for _, s := range b.Sessions {
		if f.tombstoned[s.ID] {
			continue // a forgotten session stays forgotten, here as everywhere
		}
		s.HLC, s.Origin = now(), origin
		if s.Status == "" {
			s.Status = "active"
		}
		p.sessions = append(p.sessions, plannedSession{s, plannedOp{store.OpSession, s.ID, s.Project, s.HLC, encodeSession(s)}})
	}
	for _, pr := range b.Prompts {
		if f.tombstoned[pr.SessionID] {
			continue
		}
		pr.HLC, pr.Origin = now(), origin
		pr.ID = store.NewID(pr.HLC, pr.Origin)
		p.prompts = append(p.prompts, plannedPrompt{pr, plannedOp{store.OpPrompt, pr.ID, pr.Project, pr.HLC, encodePrompt(pr)}})
	}
	seen := map[string]bool{} // within the batch too: a batch may repeat an observation
	for _, o := range b.Observations {
		o.ContentHash = o.HashContent()
		key := contentKey(o.SessionID, o.ContentHash)
		if f.stored[key] || seen[key] {
			p.duplicates++
			continue
		}
		if f.tombstoned[o.SessionID] {
			continue
		}
		seen[key] = true
		o.HLC, o.Origin = now(), origin
		o.ID = store.NewID(o.HLC, o.Origin)
		p.observations = append(p.observations, plannedObservation{o, plannedOp{store.OpObservation, o.ID, o.Project, o.HLC, encodeObservation(o)}})
	}
	for _, s := range b.Summaries {
		if f.tombstoned[s.SessionID] {
			continue
		}
		s.HLC, s.Origin = now(), origin
		s.ID = store.NewID(s.HLC, s.Origin)
		p.summaries = append(p.summaries, plannedSummary{s, plannedOp{store.OpSummary, s.ID, s.Project, s.HLC, encodeSummary(s)}})
	}
	return p
}

// appendOp writes a planned op through the transaction's op writer.
func (t *wtx) appendOp(ctx context.Context, op plannedOp) error {
	return t.ops().append(ctx, op.kind, op.recordID, op.project, op.hlc, op.payload)
}

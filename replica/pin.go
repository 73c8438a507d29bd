package replica

import (
	"context"
	"fmt"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// Pins: an observation the user pinned heads every session-start context of its project
// (see DESIGN.md, "Pins"). The pin is a last-writer-wins register per observation, written by
// ops of kind store.OpPin: pin and unpin on two devices converge to the write with the highest
// (hlc, origin), whatever the order the ops arrive in.

// pinPayload is the payload of an store.OpPin: whether observation ID is pinned. Its session and
// project travel with it, so a forget of the session drops the pin on a device that has not
// stored the record yet, and the team knows the op's project.
type pinPayload struct {
	V         int    `json:"v,omitempty"`
	ID        string `json:"id"`
	Pinned    bool   `json:"pinned"`
	SessionID string `json:"session_id,omitempty"`
	Project   string `json:"project,omitempty"`
}

func encodePin(p pinPayload) []byte {
	p.V = PayloadVersion
	return mustJSON(p)
}

func (p pinPayload) target() (id, session string) { return p.ID, p.SessionID }

func decodePin(b []byte) (pinPayload, error) {
	var p pinPayload
	err := decode(b, &p, &p.ID)
	return p, err
}

// Pin pins (or, with pinned false, unpins) the stored observation id on every device. It
// returns the observation.
func (r *Replica) Pin(ctx context.Context, id string, pinned bool) (memory.Observation, error) {
	var o memory.Observation
	err := r.writeTx(ctx, func(tx *wtx) error {
		tx.change.Origin = feed.Local
		var err error
		if o, err = liveObservation(ctx, tx, id); err != nil {
			return err
		}
		p := pinPayload{ID: o.ID, Pinned: pinned, SessionID: o.SessionID, Project: o.Project}
		hlc := r.clock.Now()
		if err := upsertPin(ctx, tx, p, hlc, r.cfg.Origin); err != nil {
			return err
		}
		return tx.ops().append(ctx, store.OpPin, o.ID, o.Project, hlc, encodePin(p))
	})
	return o, err
}

// upsertPin writes the register of p.ID when (hlc, writer) is newer than what it holds.
func upsertPin(ctx context.Context, tx *wtx, p pinPayload, hlc uint64, writer string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO pins(id, pinned, hlc, writer, session_id, project) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET pinned = excluded.pinned, hlc = excluded.hlc, writer = excluded.writer
		WHERE excluded.hlc > pins.hlc OR (excluded.hlc = pins.hlc AND excluded.writer > pins.writer)`,
		p.ID, p.Pinned, hlc, writer, p.SessionID, p.Project)
	if err != nil {
		return fmt.Errorf("pin %s: %w", p.ID, err)
	}
	tx.record(store.OpObservation, p.ID) // readers of the record see its pin
	return nil
}

// applyPin applies a remote store.OpPin (applyOne has checked the tombstones of its record and
// session).
func applyPin(ctx context.Context, tx *wtx, op store.Op, payload []byte) error {
	p, err := decodePin(payload)
	if err != nil {
		return err
	}
	if p.ID != op.RecordID {
		return fmt.Errorf("%w: pin of %s under record %s", store.ErrBadOp, p.ID, op.RecordID)
	}
	return upsertPin(ctx, tx, p, op.HLC, op.Origin)
}

// PinnedObservations returns the observations pinned in project, and every note of
// memory.GlobalProject (pinned or not: a global note is meant for every project), that no
// stored record supersedes, newest first, at most limit.
func (r *Replica) PinnedObservations(ctx context.Context, project string, limit int) ([]memory.Observation, error) {
	out, err := r.queryObservations(ctx, "SELECT "+obsColumns+` FROM observations
		WHERE (id IN (SELECT id FROM pins WHERE pinned = 1 AND project = ?1) AND +project = ?1
			OR id IN (SELECT id FROM pins WHERE pinned = 1 AND project = ?2) AND +project = ?2
			OR session_id = ?3 AND +project = ?2)
		AND `+currentObservation("observations.id")+" ORDER BY created_at DESC, id DESC LIMIT ?4",
		project, memory.GlobalProject, memory.ManualSession(memory.GlobalProject), limit)
	if err != nil {
		return nil, fmt.Errorf("pinned observations: %w", err)
	}
	return out, nil
}

// Pinned reports which of ids are pinned.
func (r *Replica) Pinned(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := r.reads.query(ctx, "SELECT id FROM pins WHERE pinned = 1 AND id IN (SELECT value FROM json_each(?))", string(mustJSON(ids)))
	if err != nil {
		return nil, fmt.Errorf("pinned: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("pinned: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// repinFromOps derives the pins from the pin ops installed by a snapshot (the snapshot
// carries no pins table): an op with a payload is a write whose record and session are not
// forgotten, and the register's winner is the same in any order.
func repinFromOps(ctx context.Context, tx *wtx) error {
	return rederive(ctx, tx, store.OpPin, decodePin, func(p pinPayload, op store.Op) error {
		return upsertPin(ctx, tx, p, op.HLC, op.Origin)
	})
}

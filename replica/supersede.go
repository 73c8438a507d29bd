package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"slices"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/memory"
)

// Supersede: a record that is wrong or outdated is named as replaced by another (see
// DESIGN.md, "Supersede"). The link is an op of kind OpSupersede whose record is the
// replaced observation; the links form a grow-only set, so two devices correcting the same
// record concurrently both keep their correction and the record is superseded by both.

// supersedePayload is the payload of an OpSupersede: the observation ID replaces By. The
// replaced record's session and project travel with it, so a device that has not (yet)
// stored the record still drops the link when that session is forgotten, and the team
// knows the op's project.
type supersedePayload struct {
	V         int    `json:"v,omitempty"`
	ID        string `json:"id"`
	By        string `json:"by"`
	SessionID string `json:"session_id,omitempty"`
	Project   string `json:"project,omitempty"`
}

func encodeSupersede(p supersedePayload) []byte {
	p.V = PayloadVersion
	return mustJSON(p)
}

func decodeSupersede(b []byte) (supersedePayload, error) {
	var p supersedePayload
	if err := decode(b, &p, &p.ID); err != nil {
		return p, err
	}
	if p.By == "" || p.By == p.ID {
		return p, fmt.Errorf("%w: supersede without a distinct replacement", store.ErrBadOp)
	}
	return p, nil
}

// Supersede marks the observation old as superseded by the observation by, both stored
// here. old leaves the session-start context, the file context and default search; it
// stays readable by ID and in timelines.
func (r *Replica) Supersede(ctx context.Context, old, by string) error {
	return r.writeTx(ctx, func(tx *wtx) error {
		tx.change.Origin = feed.Local
		o, err := liveObservation(ctx, tx, old)
		if err != nil {
			return err
		}
		if old == by {
			return fmt.Errorf("%w: %s", store.ErrSelfSupersede, old)
		}
		if _, err := liveObservation(ctx, tx, by); err != nil {
			return err
		}
		return r.supersedeTx(ctx, tx, o, by)
	})
}

// Correct stores c, an observation that holds what is true, as the replacement of the
// observation old, in one transaction: c is stamped and given its ID here (its session,
// project and files are the caller's), and old is superseded by it. It returns c as stored.
func (r *Replica) Correct(ctx context.Context, old string, c memory.Observation) (memory.Observation, error) {
	r.clampCreated(&c.CreatedAt)
	err := r.writeTx(ctx, func(tx *wtx) error {
		tx.change.Origin = feed.Local
		o, err := liveObservation(ctx, tx, old)
		if err != nil {
			return err
		}
		n := c
		n.HLC, n.Origin = r.clock.Now(), r.cfg.Origin
		n.ID = store.NewID(n.HLC, n.Origin)
		n.ContentHash = n.HashContent()
		if ok, err := storeObservation(ctx, tx, &n); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("store correction %s: not stored", n.ID)
			}
			return err
		}
		if err := tx.ops().appendObservation(ctx, n, n.HLC, encodeObservation(n)); err != nil {
			return err
		}
		tx.record(store.OpObservation, n.ID)
		c = n
		return r.supersedeTx(ctx, tx, o, n.ID)
	})
	if err != nil {
		return memory.Observation{}, err
	}
	return c, nil
}

// liveObservation reads the observation id inside tx, telling a forgotten record from an
// unknown one.
func liveObservation(ctx context.Context, tx *wtx, id string) (memory.Observation, error) {
	o, err := scanObservation(tx.QueryRowContext(ctx, "SELECT "+obsColumns+" FROM observations WHERE id = ?", id))
	if err == nil {
		return o, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return o, fmt.Errorf("read %s: %w", id, err)
	}
	dead, terr := isTombstoned(ctx, tx, id)
	if terr != nil {
		return o, terr
	}
	if dead {
		return o, fmt.Errorf("%w: %s", store.ErrForgotten, id)
	}
	return o, fmt.Errorf("%w: %s", store.ErrUnknownRecord, id)
}

// supersedeTx links old (stored) to its replacement by and appends the op.
func (r *Replica) supersedeTx(ctx context.Context, tx *wtx, old memory.Observation, by string) error {
	var hidden int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM supersedes s JOIN observations n ON n.id = s.new_id
		WHERE s.old_id = ? LIMIT 1`, by).Scan(&hidden)
	switch {
	case err == nil:
		return fmt.Errorf("%w: %s", store.ErrSupersededReplacement, by)
	case !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("supersede: %w", err)
	}
	p := supersedePayload{ID: old.ID, By: by, SessionID: old.SessionID, Project: old.Project}
	if err := insertSupersede(ctx, tx, p); err != nil {
		return err
	}
	return tx.ops().append(ctx, store.OpSupersede, old.ID, old.Project, r.clock.Now(), encodeSupersede(p))
}

// insertSupersede adds the link of p: the merge rule is a grow-only set.
func insertSupersede(ctx context.Context, tx *wtx, p supersedePayload) error {
	if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO supersedes(old_id, new_id, session_id) VALUES (?, ?, ?)",
		p.ID, p.By, p.SessionID); err != nil {
		return fmt.Errorf("supersede %s: %w", p.ID, err)
	}
	tx.record(store.OpObservation, p.ID) // readers of the old record see it superseded
	tx.record(store.OpObservation, p.By)
	return nil
}

// importSupersede stores an imported link when both its observations are stored here and
// the link is new; it reports whether it stored it (an unknown, forgotten or self link, or
// one already held, is skipped, which keeps a repeated import a no-op).
func (r *Replica) importSupersede(ctx context.Context, tx *wtx, s store.Supersession) (bool, error) {
	if s.Old == "" || s.Old == s.New {
		return false, nil
	}
	old, err := liveObservation(ctx, tx, s.Old)
	if errors.Is(err, store.ErrUnknownRecord) || errors.Is(err, store.ErrForgotten) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := liveObservation(ctx, tx, s.New); errors.Is(err, store.ErrUnknownRecord) || errors.Is(err, store.ErrForgotten) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	var one int
	err = tx.QueryRowContext(ctx, "SELECT 1 FROM supersedes WHERE old_id = ? AND new_id = ?", s.Old, s.New).Scan(&one)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("import supersede: %w", err)
	}
	p := supersedePayload{ID: old.ID, By: s.New, SessionID: old.SessionID, Project: old.Project}
	if err := insertSupersede(ctx, tx, p); err != nil {
		return false, err
	}
	return true, tx.ops().append(ctx, store.OpSupersede, old.ID, old.Project, r.clock.Now(), encodeSupersede(p))
}

// applySupersede applies a remote OpSupersede (applyOne has checked the tombstones of its
// record and session).
func applySupersede(ctx context.Context, tx *wtx, op store.Op, payload []byte) error {
	p, err := decodeSupersede(payload)
	if err != nil {
		return err
	}
	if p.ID != op.RecordID {
		return fmt.Errorf("%w: supersede of %s under record %s", store.ErrBadOp, p.ID, op.RecordID)
	}
	return insertSupersede(ctx, tx, p)
}

// currentObservation is the SQL condition that the observation whose ID is the column
// expression col (qualified: the subquery has its own observations, n) is not superseded
// by a stored record: one primary-key lookup per row the
// read looks at. (A NOT IN list of every superseded ID was built from a walk of all the
// links at each read, which grows with the database, not with the read.)
func currentObservation(col string) string {
	return "NOT EXISTS (SELECT 1 FROM supersedes s JOIN observations n ON n.id = s.new_id WHERE s.old_id = " + col + ")"
}

// Supersessions returns the links that name any of ids, as old or as new, whose other end
// is stored (a link to a forgotten replacement is not shown), ordered by (Old, New).
func (r *Replica) Supersessions(ctx context.Context, ids []string) ([]store.Supersession, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := r.reads.query(ctx, `SELECT s.old_id, s.new_id FROM supersedes s
		JOIN observations o ON o.id = s.old_id JOIN observations n ON n.id = s.new_id
		WHERE s.old_id IN (SELECT value FROM json_each(?1)) OR s.new_id IN (SELECT value FROM json_each(?1))
		ORDER BY s.old_id, s.new_id`, string(mustJSON(ids)))
	if err != nil {
		return nil, fmt.Errorf("supersessions: %w", err)
	}
	defer rows.Close()
	var out []store.Supersession
	for rows.Next() {
		var s store.Supersession
		if err := rows.Scan(&s.Old, &s.New); err != nil {
			return nil, fmt.Errorf("supersessions: %w", err)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, rows.Err()
}

// relinkSupersedes derives the links from the supersede ops installed by a snapshot: the
// links are not a snapshot table (the format stays that of builds without them), and an op
// with a payload is exactly a link whose record and session are not forgotten.
func relinkSupersedes(ctx context.Context, tx *wtx) error {
	return rederive(ctx, tx, store.OpSupersede, decodeSupersede, func(p supersedePayload, _ store.Op) error {
		return insertSupersede(ctx, tx, p)
	})
}

// derivedPayload is the payload of an op kind whose table a snapshot's receiver derives from
// the op-log (supersede links, pins): the record it is about, and that record's session.
type derivedPayload interface {
	target() (id, session string)
}

// rederive applies, through apply, every op of kind that still carries a payload and whose
// record and session are not forgotten. A malformed op (no decode, or a payload naming
// another record than the op) applies nothing, as in ApplyOps.
func rederive[P derivedPayload](ctx context.Context, tx *wtx, kind string, decode func([]byte) (P, error), apply func(P, store.Op) error) error {
	ops, err := payloadOps(ctx, tx, kind)
	if err != nil {
		return fmt.Errorf("rederive %s: %w", kind, err)
	}
	for _, op := range ops {
		p, err := decode(op.Payload)
		if err != nil {
			continue
		}
		id, session := p.target()
		if id != op.RecordID {
			continue
		}
		dead, err := isTombstoned(ctx, tx, id, session)
		if err != nil {
			return err
		}
		if !dead {
			if err := apply(p, op); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p supersedePayload) target() (id, session string) { return p.ID, p.SessionID }

// payloadOps reads the ops of kind that still carry a payload (of records and sessions not
// forgotten): what a snapshot's receiver derives the supersede links and the pins from.
func payloadOps(ctx context.Context, tx *wtx, kind string) ([]store.Op, error) {
	rows, err := tx.QueryContext(ctx, "SELECT "+opsOrigin+", o.hlc, o.record_id, o.payload FROM ops o WHERE o.kind = ? AND o.payload IS NOT NULL", kind)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ops []store.Op
	for rows.Next() {
		op := store.Op{Kind: kind}
		var hlc int64
		if err := rows.Scan(&op.Origin, &hlc, &op.RecordID, &op.Payload); err != nil {
			return nil, err
		}
		op.HLC = uint64(hlc)
		ops = append(ops, op)
	}
	return ops, rows.Err()
}

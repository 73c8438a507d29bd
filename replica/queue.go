package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// PendingEvent is one hook event in the durable queue.
type PendingEvent struct {
	ID        int64
	EventID   string
	Kind      string
	SessionID string
	Project   string
	Payload   []byte // the event as the hook sent it (already cleaned)
	CreatedAt int64
	Attempts  int
}

type enqueueReq struct {
	ev    PendingEvent
	reply chan enqueueReply
}

type enqueueReply struct {
	dup bool
	err error
}

// maxGroupCommit bounds how many concurrent enqueues share one transaction (one fsync).
const maxGroupCommit = 512

// Enqueue stores an event durably. When it returns nil the event survives a crash. dup is
// true when the event ID is already queued or was already stored. Concurrent calls are
// group-committed: one transaction and one fsync for everything waiting.
func (r *Replica) Enqueue(ctx context.Context, ev PendingEvent) (dup bool, err error) {
	if ev.EventID == "" {
		return false, errors.New("enqueue: event id required")
	}
	req := enqueueReq{ev: ev, reply: make(chan enqueueReply, 1)}
	select {
	case r.enq <- req:
	case <-r.done:
		return false, ErrClosed
	case <-ctx.Done():
		return false, ctx.Err()
	}
	// Once handed over, the committer always answers; waiting on ctx here could report a
	// failure for an event that is then stored anyway.
	rep := <-req.reply
	return rep.dup, rep.err
}

func (r *Replica) commitLoop() {
	defer r.wg.Done()
	batch := make([]enqueueReq, 0, maxGroupCommit)
	for {
		batch = batch[:0]
		select {
		case req := <-r.enq:
			batch = append(batch, req)
		case <-r.done:
			r.drainClosed()
			return
		}
	fill:
		for len(batch) < maxGroupCommit {
			select {
			case req := <-r.enq:
				batch = append(batch, req)
			default:
				break fill
			}
		}
		dups, err := r.insertPending(batch)
		for i, req := range batch {
			req.reply <- enqueueReply{dup: err == nil && dups[i], err: err}
		}
	}
}

// drainClosed answers requests that raced with Close.
func (r *Replica) drainClosed() {
	for {
		select {
		case req := <-r.enq:
			req.reply <- enqueueReply{err: ErrClosed}
		default:
			return
		}
	}
}

func (r *Replica) insertPending(batch []enqueueReq) ([]bool, error) {
	dups := make([]bool, len(batch))
	err := r.writeTx(context.Background(), func(tx *sql.Tx) error {
		seen, err := tx.Prepare("SELECT 1 FROM seen_events WHERE event_id = ?")
		if err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		defer seen.Close()
		ins, err := tx.Prepare(`INSERT OR IGNORE INTO pending(event_id, kind, session_id, project, payload, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return fmt.Errorf("enqueue: %w", err)
		}
		defer ins.Close()
		for i, req := range batch {
			ev := req.ev
			var one int
			err := seen.QueryRow(ev.EventID).Scan(&one)
			if err == nil {
				dups[i] = true
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("enqueue: %w", err)
			}
			res, err := ins.Exec(ev.EventID, ev.Kind, ev.SessionID, ev.Project, ev.Payload, ev.CreatedAt)
			if err != nil {
				return fmt.Errorf("enqueue: %w", err)
			}
			n, _ := res.RowsAffected()
			dups[i] = n == 0
		}
		return nil
	})
	return dups, err
}

// ClaimSession claims, in arrival order, up to max pending events of the oldest session that
// has no claimed events, so one session is never processed by two workers at once and its
// events keep their order. It returns nil when nothing is claimable.
func (r *Replica) ClaimSession(ctx context.Context, max int) ([]PendingEvent, error) {
	var out []PendingEvent
	err := r.writeTx(ctx, func(tx *sql.Tx) error {
		out = nil
		var sid string
		err := tx.QueryRowContext(ctx, `SELECT session_id FROM pending p WHERE state = 0
			AND NOT EXISTS (SELECT 1 FROM pending c WHERE c.session_id = p.session_id AND c.state = 1)
			ORDER BY id LIMIT 1`).Scan(&sid)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, event_id, kind, session_id, project, payload, created_at, attempts
			FROM pending WHERE session_id = ? AND state = 0 ORDER BY id LIMIT ?`, sid, max)
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		for rows.Next() {
			var ev PendingEvent
			if err := rows.Scan(&ev.ID, &ev.EventID, &ev.Kind, &ev.SessionID, &ev.Project, &ev.Payload, &ev.CreatedAt, &ev.Attempts); err != nil {
				rows.Close()
				return fmt.Errorf("claim: %w", err)
			}
			out = append(out, ev)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		for _, ev := range out {
			if _, err := tx.ExecContext(ctx, "UPDATE pending SET state = 1, attempts = attempts + 1 WHERE id = ?", ev.ID); err != nil {
				return fmt.Errorf("claim: %w", err)
			}
		}
		return nil
	})
	return out, err
}

// Release returns claimed events to the queue (processing failed; they will be retried).
func (r *Replica) Release(ctx context.Context, ids []int64) error {
	return r.writeTx(ctx, func(tx *sql.Tx) error {
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, "UPDATE pending SET state = 0 WHERE id = ?", id); err != nil {
				return fmt.Errorf("release: %w", err)
			}
		}
		return nil
	})
}

// ResetClaimed returns every claimed event to the queue. The node calls it at start: a claim
// that was not completed belonged to a process that died.
func (r *Replica) ResetClaimed(ctx context.Context) (int64, error) {
	res, err := r.w.ExecContext(ctx, "UPDATE pending SET state = 0 WHERE state = 1")
	if err != nil {
		return 0, fmt.Errorf("reset claims: %w", err)
	}
	return res.RowsAffected()
}

// QueueDepth returns how many events wait (pending or claimed).
func (r *Replica) QueueDepth(ctx context.Context) (int, error) {
	var n int
	err := r.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM pending").Scan(&n)
	return n, err
}

// SessionState returns the local processing state of a session; ok is false when the session
// is unknown.
func (r *Replica) SessionState(ctx context.Context, id string) (st SessionState, ok bool, err error) {
	var priv int
	err = r.w.QueryRowContext(ctx, "SELECT prompt_count, turn_private, first_prompt, last_prompt FROM sessions WHERE id = ?", id).
		Scan(&st.PromptCount, &priv, &st.FirstPrompt, &st.LastPrompt)
	if errors.Is(err, sql.ErrNoRows) {
		return SessionState{SessionID: id}, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("session state: %w", err)
	}
	st.SessionID, st.TurnPrivate = id, priv == 1
	return st, true, nil
}

package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"strings"
	"time"
)

type enqueueReq struct {
	ev    store.PendingEvent
	reply chan enqueueReply
}

type enqueueReply struct {
	dup bool
	err error
}

// maxGroupCommit bounds how many concurrent enqueues share one transaction of the queue
// database (and one fsync, with FsyncAcks).
const maxGroupCommit = 512

// Enqueue stores an event in the queue database. When it returns nil the event survives a
// crash of the node (and power loss too with FsyncAcks). dup is true when the event ID is
// already queued or was already stored. Concurrent calls are group-committed: one
// transaction for everything waiting.
func (r *Replica) Enqueue(ctx context.Context, ev store.PendingEvent) (dup bool, err error) {
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
	idle := r.cfg.QueueIdle
	if idle <= 0 {
		idle = DefaultQueueIdle
	}
	quiet := time.NewTimer(idle)
	defer quiet.Stop()
	grown := true // the WAL may hold frames from before this open
	for {
		batch = batch[:0]
		select {
		case req := <-r.enq:
			batch = append(batch, req)
		case <-quiet.C:
			// Nothing arrived for idle. Once the worker has drained the queue too, give
			// the WAL's disk space back; until then look again later.
			if !grown {
				continue
			}
			if r.pending.Load() > 0 {
				quiet.Reset(idle)
				continue
			}
			if err := r.truncateQueueWAL(); err != nil {
				r.log.Warn("queue WAL not truncated", "err", err)
			}
			grown = false
			continue
		case <-r.done:
			r.drainClosed()
			return
		}
		grown = true
		quiet.Reset(idle)
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
		err = storageFull(err)
		for i, req := range batch {
			req.reply <- enqueueReply{dup: err == nil && dups[i], err: err}
		}
	}
}

// truncateQueueWAL checkpoints the queue database and truncates its WAL to zero bytes.
func (r *Replica) truncateQueueWAL() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.q.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("checkpoint queue: %w", err)
	}
	return nil
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
	ctx := context.Background()
	dups := make([]bool, len(batch))
	for i, req := range batch {
		var one int
		err := r.stmtSeen.QueryRowContext(ctx, req.ev.EventID).Scan(&one)
		switch {
		case err == nil:
			dups[i] = true
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("enqueue: %w", err)
		}
	}
	tx, err := r.q.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	defer tx.Rollback()
	ins := tx.StmtContext(ctx, r.stmtEnqueue)
	var inserted int64
	for i, req := range batch {
		ev := req.ev
		if dups[i] {
			continue
		}
		res, err := ins.ExecContext(ctx, ev.EventID, ev.Kind, ev.SessionID, ev.Project, ev.Payload, ev.CreatedAt)
		if err != nil {
			return nil, fmt.Errorf("enqueue: %w", err)
		}
		n, _ := res.RowsAffected()
		dups[i] = n == 0
		inserted += n
	}
	// Counted before the rows become visible, so a worker that claims and deletes them
	// right after the commit can never take the depth below zero.
	r.pending.Add(inserted)
	if err := tx.Commit(); err != nil {
		r.pending.Add(-inserted)
		return nil, fmt.Errorf("enqueue: %w", err)
	}
	return dups, nil
}

// seenAny returns which of ids were already turned into records (memnode.db), in one query.
// Reads start a fresh snapshot, so a worker commit that returned is always visible.
func (r *Replica) seenAny(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)] // well under SQLite's variable limit
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := r.r.QueryContext(ctx, "SELECT event_id FROM seen_events WHERE event_id IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ClaimSession claims, in arrival order, up to max pending events of the oldest session that
// no worker holds, so one session is never processed by two workers at once and its events
// keep their order. It returns a zero Claim when nothing is claimable. The caller must call
// Unclaim when done (after Commit, or after Release on failure).
func (r *Replica) ClaimSession(ctx context.Context, max int) (store.Claim, error) {
	// The claim query runs on the writer connection, under claimMu: a worker unclaims only
	// after its Commit returned, so a session seen unclaimed here has no processed rows left.
	r.claimMu.Lock()
	defer r.claimMu.Unlock()
	rows, err := r.q.QueryContext(ctx, "SELECT session_id FROM pending ORDER BY id LIMIT 1024")
	if err != nil {
		return store.Claim{}, fmt.Errorf("claim: %w", err)
	}
	sid := ""
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return store.Claim{}, fmt.Errorf("claim: %w", err)
		}
		if !r.claimed[s] {
			sid = s
			break
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Claim{}, fmt.Errorf("claim: %w", err)
	}
	if sid == "" {
		return store.Claim{}, nil
	}
	rows, err = r.q.QueryContext(ctx, `SELECT id, event_id, kind, session_id, project, payload, created_at, attempts
		FROM pending WHERE session_id = ? ORDER BY id LIMIT ?`, sid, max)
	if err != nil {
		return store.Claim{}, fmt.Errorf("claim: %w", err)
	}
	defer rows.Close()
	c := store.Claim{SessionID: sid}
	for rows.Next() {
		var ev store.PendingEvent
		if err := rows.Scan(&ev.ID, &ev.EventID, &ev.Kind, &ev.SessionID, &ev.Project, &ev.Payload, &ev.CreatedAt, &ev.Attempts); err != nil {
			return store.Claim{}, fmt.Errorf("claim: %w", err)
		}
		c.Events = append(c.Events, ev)
	}
	if err := rows.Err(); err != nil {
		return store.Claim{}, fmt.Errorf("claim: %w", err)
	}
	rows.Close()
	// An event stored by a commit whose queue cleanup did not happen (a crash in between)
	// is dropped here instead of being processed twice.
	ids := make([]string, len(c.Events))
	for i, ev := range c.Events {
		ids[i] = ev.EventID
	}
	seen, err := r.seenAny(ctx, ids)
	if err != nil {
		return store.Claim{}, fmt.Errorf("claim: %w", err)
	}
	kept := c.Events[:0]
	var stale []int64
	for _, ev := range c.Events {
		if seen[ev.EventID] {
			stale = append(stale, ev.ID)
			continue
		}
		kept = append(kept, ev)
	}
	c.Events = kept
	if err := r.deletePending(ctx, stale); err != nil {
		return store.Claim{}, fmt.Errorf("claim: %w", err)
	}
	if len(c.Events) > 0 {
		r.claimed[sid] = true
	}
	return c, nil
}

// deletePending removes queue rows whose events are stored: one transaction, one
// statement per 500 rows (well under SQLite's variable limit). It runs to its end even if
// ctx is cancelled — the records are already committed, and a cancellable context would
// make go-sqlite3 watch every statement on a goroutine of its own.
func (r *Replica) deletePending(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	tx, err := r.q.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var deleted int64
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), 500)]
		ids = ids[len(chunk):]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM pending WHERE id IN ("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		deleted += n
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	r.pending.Add(-deleted)
	return nil
}

// placeholders returns "?,?,…,?" with n marks.
func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

// Unclaim releases a session claimed by ClaimSession.
func (r *Replica) Unclaim(sessionID string) {
	r.claimMu.Lock()
	delete(r.claimed, sessionID)
	r.claimMu.Unlock()
}

// Release records a failed attempt on claimed events: they stay queued and are retried,
// except those that have now failed MaxAttempts times, which move to the dead letters. The
// caller still calls Unclaim.
func (r *Replica) Release(ctx context.Context, ids []int64) error {
	tx, err := r.q.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	defer tx.Rollback()
	dead := int64(0)
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, "UPDATE pending SET attempts = attempts + 1 WHERE id = ?", id); err != nil {
			return fmt.Errorf("release: %w", err)
		}
		// The session ID is kept short: a poison event's may be megabytes long.
		if _, err := tx.ExecContext(ctx, `INSERT INTO dead(event_id, kind, session_id, project, payload, attempts, created_at, dead_at)
			SELECT event_id, kind, substr(session_id, 1, 512), substr(project, 1, 4096), payload, attempts, created_at, ?
			FROM pending WHERE id = ? AND attempts >= ?`, time.Now().UnixMilli(), id, store.MaxAttempts); err != nil {
			return fmt.Errorf("release: dead letter: %w", err)
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM pending WHERE id = ? AND attempts >= ?", id, store.MaxAttempts)
		if err != nil {
			return fmt.Errorf("release: dead letter: %w", err)
		}
		n, _ := res.RowsAffected()
		dead += n
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	r.pending.Add(-dead)
	return nil
}

// DeadLetters returns how many events were set aside after MaxAttempts failures.
func (r *Replica) DeadLetters(ctx context.Context) (int, error) {
	var n int
	if err := r.q.QueryRowContext(ctx, "SELECT COUNT(*) FROM dead").Scan(&n); err != nil {
		return 0, fmt.Errorf("count dead letters: %w", err)
	}
	return n, nil
}

// PurgeDead deletes the dead letters (secure_delete zeroes their payloads) and returns how
// many there were.
func (r *Replica) PurgeDead(ctx context.Context) (int, error) {
	res, err := r.q.ExecContext(ctx, "DELETE FROM dead")
	if err != nil {
		return 0, fmt.Errorf("purge dead letters: %w", err)
	}
	n, _ := res.RowsAffected()
	if _, err := r.q.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return int(n), fmt.Errorf("purge dead letters: checkpoint: %w", err)
	}
	return int(n), nil
}

// LastQueuedPrompt returns the latest prompt event of a session still in the queue; ok is
// false when none waits. The node's privacy gate reads it to know whether the turn an event
// belongs to was wholly private before its prompt became a record.
func (r *Replica) LastQueuedPrompt(ctx context.Context, sessionID string) (ev store.PendingEvent, ok bool, err error) {
	err = r.q.QueryRowContext(ctx, lastQueuedPromptQuery, sessionID).
		Scan(&ev.ID, &ev.EventID, &ev.Kind, &ev.SessionID, &ev.Project, &ev.Payload, &ev.CreatedAt, &ev.Attempts)
	if errors.Is(err, sql.ErrNoRows) {
		return store.PendingEvent{}, false, nil
	}
	if err != nil {
		return store.PendingEvent{}, false, fmt.Errorf("last queued prompt: %w", err)
	}
	return ev, true, nil
}

// lastQueuedPromptQuery is one seek in the partial index pending_prompt (queueSchema).
const lastQueuedPromptQuery = `SELECT id, event_id, kind, session_id, project, payload, created_at, attempts FROM pending
	WHERE session_id = ? AND kind = 'prompt' ORDER BY id DESC LIMIT 1`

// QueueDepth returns how many events wait (queued or being processed).
func (r *Replica) QueueDepth(ctx context.Context) (int, error) {
	return int(r.pending.Load()), ctx.Err()
}

// SessionState returns the local processing state of a session; ok is false when the session
// is unknown (its state is then the zero state). It reads on the read pool: the hook path
// asks it (the pipeline's private-turn gate, after every forget) and must never wait for
// the writer, which a forget or an import may hold. A read sees every committed
// transaction; what a write still holds uncommitted is covered by the one who waits for it
// (Commit re-reads the state in its transaction, Batch.Claimed).
func (r *Replica) SessionState(ctx context.Context, id string) (st store.SessionState, ok bool, err error) {
	return readSessionState(r.r.QueryRowContext(ctx, sessionStateQuery, id), id)
}

// sessionStateTx is SessionState inside a write transaction (Commit's stale-claim check).
func sessionStateTx(ctx context.Context, tx *wtx, id string) (store.SessionState, error) {
	st, _, err := readSessionState(tx.QueryRowContext(ctx, sessionStateQuery, id), id)
	return st, err
}

const sessionStateQuery = "SELECT prompt_count, turn_private, first_prompt, last_prompt FROM sessions WHERE id = ?"

func readSessionState(row *sql.Row, id string) (st store.SessionState, ok bool, err error) {
	var priv int
	err = row.Scan(&st.PromptCount, &priv, &st.FirstPrompt, &st.LastPrompt)
	if errors.Is(err, sql.ErrNoRows) {
		return store.SessionState{SessionID: id}, false, nil
	}
	if err != nil {
		return store.SessionState{SessionID: id}, false, fmt.Errorf("session state: %w", err)
	}
	st.SessionID, st.TurnPrivate = id, priv == 1
	return st, true, nil
}

package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// Commit stores a batch of local changes in one transaction, minting IDs and HLC stamps for
// new records and appending their ops.
func (r *Replica) Commit(ctx context.Context, b *store.Batch) (store.CommitResult, error) {
	r.clampBatch(b)
	var res store.CommitResult
	err := r.writeTx(ctx, func(tx *wtx) error {
		res = store.CommitResult{}
		tx.change.Origin = feed.Local
		// One record indexes as cheaply in its trigger; a batch of them at the end.
		if len(b.Prompts)+len(b.Observations)+len(b.Summaries) > 1 {
			if err := tx.deferIndexing(ctx); err != nil {
				return err
			}
		}
		facts, err := readCommitFacts(ctx, tx, b)
		if err != nil {
			return err
		}
		if facts.stale != "" {
			return fmt.Errorf("%w: session %s", store.ErrStaleClaim, facts.stale)
		}
		plan := planCommit(b, facts, r.clock.Now, r.cfg.Origin)
		res.Duplicates = plan.duplicates
		for _, ps := range plan.sessions {
			if err := upsertSession(ctx, tx, ps.s); err != nil {
				return err
			}
			if err := tx.appendOp(ctx, ps.op); err != nil {
				return err
			}
			tx.record(store.OpSession, ps.s.ID)
		}
		for _, st := range b.States {
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET prompt_count = ?, turn_private = ?, first_prompt = ?, last_prompt = ? WHERE id = ?`,
				st.PromptCount, st.TurnPrivate, st.FirstPrompt, st.LastPrompt, st.SessionID); err != nil {
				return fmt.Errorf("update session state: %w", err)
			}
		}
		// The inserts re-check their guards (INSERT OR IGNORE, tombstones: the sessions'
		// were read with the facts, the minted IDs' are read here in one go); with the facts
		// read in this transaction they always store, but a record is only announced by an
		// op if it was.
		dead, err := mintedTombstoned(ctx, tx, plan)
		if err != nil {
			return err
		}
		for _, pp := range plan.prompts {
			if dead[pp.p.ID] {
				continue
			}
			if ok, err := storePrompt(ctx, tx, pp.p); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			if err := tx.ops().appendStored(ctx, pp.op.kind, pp.op.recordID, pp.op.project, pp.op.hlc, pp.op.payload); err != nil {
				return err
			}
			tx.record(store.OpPrompt, pp.p.ID)
			res.Prompts = append(res.Prompts, pp.p)
		}
		for _, po := range plan.observations {
			o := po.o
			if dead[o.ID] {
				continue
			}
			if ok, err := storeObservation(ctx, tx, &o); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			if err := tx.ops().appendObservation(ctx, o, po.op.hlc, po.op.payload); err != nil {
				return err
			}
			tx.record(store.OpObservation, o.ID)
			res.Observations = append(res.Observations, o)
		}
		for _, ps := range plan.summaries {
			if dead[ps.s.ID] {
				continue
			}
			if ok, err := storeSummary(ctx, tx, ps.s); err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			if err := tx.ops().appendStored(ctx, ps.op.kind, ps.op.recordID, ps.op.project, ps.op.hlc, ps.op.payload); err != nil {
				return err
			}
			tx.record(store.OpSummary, ps.s.ID)
			res.Summaries = append(res.Summaries, ps.s)
		}
		now := r.cfg.Now().UnixMilli()
		for _, ev := range b.DoneEvents {
			if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO seen_events(event_id, at) VALUES (?, ?)", ev, now); err != nil {
				return fmt.Errorf("remember event: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	// The records and their event IDs are durable; the queue rows go now. A crash in
	// between leaves rows that ClaimSession recognises (seen_events) and drops.
	if err := r.deletePending(ctx, b.Done); err != nil {
		return res, fmt.Errorf("complete queue rows: %w", err)
	}
	return res, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("replica: marshal %T: %v", v, err)) // records are plain structs
	}
	return b
}

// sessionUpsert writes a session as the register it is: the later stamp wins (then the
// greater origin), started_at keeps the minimum. upsertSession and a snapshot's install use it.
const sessionUpsert = `INSERT INTO sessions(id, project, platform, started_at, ended_at, status, origin, hlc)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT(id) DO UPDATE SET
		started_at = MIN(sessions.started_at, excluded.started_at),
		project  = CASE WHEN ` + sessionWins + ` THEN excluded.project ELSE sessions.project END,
		platform = CASE WHEN ` + sessionWins + ` THEN excluded.platform ELSE sessions.platform END,
		ended_at = CASE WHEN ` + sessionWins + ` THEN excluded.ended_at ELSE sessions.ended_at END,
		status   = CASE WHEN ` + sessionWins + ` THEN excluded.status ELSE sessions.status END,
		origin   = CASE WHEN ` + sessionWins + ` THEN excluded.origin ELSE sessions.origin END,
		hlc      = CASE WHEN ` + sessionWins + ` THEN excluded.hlc ELSE sessions.hlc END`

// sessionWins is the session register's rule: the later stamp, then the greater origin.
const sessionWins = `(excluded.hlc > sessions.hlc OR (excluded.hlc = sessions.hlc AND excluded.origin > sessions.origin))`

// upsertSession applies an LWW write of a session: the higher HLC wins, ties broken by
// origin. started_at is the minimum ever seen whichever write wins, so it does not depend on
// the order writes arrive in.
func upsertSession(ctx context.Context, tx *wtx, s memory.Session) error {
	var ended any
	if s.EndedAt != 0 {
		ended = s.EndedAt
	}
	_, err := tx.ExecContext(ctx, sessionUpsert, s.ID, s.Project, s.Platform, s.StartedAt, ended, s.Status, s.Origin, s.HLC)
	if err != nil {
		return fmt.Errorf("upsert session: %w", err)
	}
	return nil
}

func upsertDevice(ctx context.Context, tx *wtx, d memory.Device, hlc uint64, writer string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO devices(origin, name, hlc, writer) VALUES (?, ?, ?, ?)
		ON CONFLICT(origin) DO UPDATE SET name = excluded.name, hlc = excluded.hlc, writer = excluded.writer
		WHERE excluded.hlc > devices.hlc OR (excluded.hlc = devices.hlc AND excluded.writer > devices.writer)`,
		d.Origin, d.Name, hlc, writer)
	if err != nil {
		return fmt.Errorf("upsert device: %w", err)
	}
	return nil
}

func insertPrompt(ctx context.Context, tx *wtx, p memory.Prompt) (bool, error) {
	if dead, err := isTombstoned(ctx, tx, p.ID, p.SessionID); err != nil || dead {
		return false, err
	}
	return storePrompt(ctx, tx, p)
}

// storePrompt is insertPrompt for a caller that has checked the tombstones.
func storePrompt(ctx context.Context, tx *wtx, p memory.Prompt) (bool, error) {
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO prompts(id, session_id, project, prompt_number, text, created_at, origin, hlc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, p.ID, p.SessionID, p.Project, p.PromptNumber, p.Text, p.CreatedAt, p.Origin, p.HLC)
	if err != nil {
		return false, fmt.Errorf("insert prompt: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func insertObservation(ctx context.Context, tx *wtx, o *memory.Observation) (bool, error) {
	if dead, err := isTombstoned(ctx, tx, o.ID, o.SessionID); err != nil || dead {
		return false, err
	}
	return storeObservation(ctx, tx, o)
}

// storeObservation is insertObservation for a caller that has checked the tombstones.
func storeObservation(ctx context.Context, tx *wtx, o *memory.Observation) (bool, error) {
	if o.ContentHash == "" {
		o.ContentHash = o.HashContent()
	}
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO observations(`+obsColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.SessionID, o.Project, o.Type, o.Title, o.Subtitle, o.Narrative, jsonList(o.Facts), jsonList(o.Concepts),
		jsonList(o.FilesRead), jsonList(o.FilesModified), o.ToolName, o.PromptNumber, o.DiscoveryTokens, o.Model,
		hashValue(o.ContentHash), o.CreatedAt, o.Origin, o.HLC)
	if err != nil {
		return false, fmt.Errorf("insert observation: %w", err)
	}
	n, _ := res.RowsAffected()
	if n != 1 {
		return false, nil
	}
	rowid, err := res.LastInsertId()
	if err != nil {
		return false, fmt.Errorf("insert observation: %w", err)
	}
	if err := indexObservationFiles(ctx, tx, rowid, o.FilesModified, o.FilesRead); err != nil {
		return false, err
	}
	return true, nil
}

// indexObservationFiles writes the observation_files rows (derived, never replicated) of the
// observation stored at rowid, each naming its path's file_paths row (added for a new path).
func indexObservationFiles(ctx context.Context, tx *wtx, rowid int64, modified, read []string) error {
	for _, f := range []struct {
		paths    []string
		modified int
	}{{modified, 1}, {read, 0}} {
		for _, p := range f.paths {
			id, err := tx.pathID(ctx, p)
			if err != nil {
				return fmt.Errorf("insert observation file: %w", err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO observation_files(path_id, obs_rowid, modified) VALUES (?, ?, ?)`,
				id, rowid, f.modified); err != nil {
				return fmt.Errorf("insert observation file: %w", err)
			}
		}
	}
	return nil
}

// pathID is the file_paths row of path, added when no observation names it yet. The
// transaction remembers the paths it looked up: an import names a few thousand paths
// over and over.
func (t *wtx) pathID(ctx context.Context, path string) (int64, error) {
	return t.interned(ctx, &t.paths, path, "SELECT id FROM file_paths WHERE path = ?",
		"INSERT INTO file_paths(path, name) VALUES (?, ?)", path, FileName(path))
}

// interned returns the number of key in an interning table (file_paths, origins): the id
// lookup finds (bound to key), or the rowid of the row insert adds (bound to insertArgs)
// when there is none. cache keeps the numbers for the transaction (a rolled-back
// transaction takes them with it): a batch or an install names the same few keys often.
func (t *wtx) interned(ctx context.Context, cache *map[string]int64, key, lookup, insert string, insertArgs ...any) (int64, error) {
	if id, ok := (*cache)[key]; ok {
		return id, nil
	}
	var id int64
	err := t.QueryRowContext(ctx, lookup, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		res, ierr := t.ExecContext(ctx, insert, insertArgs...)
		if ierr != nil {
			return 0, ierr
		}
		id, err = res.LastInsertId()
	}
	if err != nil {
		return 0, err
	}
	if *cache == nil {
		*cache = map[string]int64{}
	}
	(*cache)[key] = id
	return id, nil
}

func insertSummary(ctx context.Context, tx *wtx, s memory.Summary) (bool, error) {
	if dead, err := isTombstoned(ctx, tx, s.ID, s.SessionID); err != nil || dead {
		return false, err
	}
	return storeSummary(ctx, tx, s)
}

// storeSummary is insertSummary for a caller that has checked the tombstones.
func storeSummary(ctx context.Context, tx *wtx, s memory.Summary) (bool, error) {
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO summaries(id, session_id, project, request, investigated,
		learned, completed, next_steps, notes, discovery_tokens, model, created_at, origin, hlc)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		s.ID, s.SessionID, s.Project, s.Request, s.Investigated, s.Learned, s.Completed, s.NextSteps, s.Notes,
		s.DiscoveryTokens, s.Model, s.CreatedAt, s.Origin, s.HLC)
	if err != nil {
		return false, fmt.Errorf("insert summary: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

func jsonList(v []string) string {
	if len(v) == 0 {
		return "[]"
	}
	return string(mustJSON(v))
}

// SetDeviceName records a device's human name (an LWW register that replicates).
func (r *Replica) SetDeviceName(ctx context.Context, origin, name string) error {
	return r.writeTx(ctx, func(tx *wtx) error {
		hlc := r.clock.Now()
		d := memory.Device{Origin: origin, Name: name}
		if err := upsertDevice(ctx, tx, d, hlc, r.cfg.Origin); err != nil {
			return err
		}
		tx.change.Origin = feed.Local
		tx.record(store.OpDevice, origin)
		ow := tx.ops()
		return ow.append(ctx, store.OpDevice, "device:"+origin, "", hlc, encodeDevice(d))
	})
}

// Forget removes records (observation, prompt or summary IDs, or session IDs with everything
// in them) and every trace of their content: rows, FTS index entries, op-log payloads. The
// tombstone replicates and wins on every device: a later copy can never resurrect them.
// It returns how many of ids named something this replica knew.
//
// A session whose events still wait in the queue counts as found: its tombstone makes
// Commit store nothing of it (a worker building it now included), and purgeQueue drops its
// events.
func (r *Replica) Forget(ctx context.Context, ids []string) (int, error) {
	queued := map[string]bool{}
	for _, id := range ids {
		q, err := r.queuedSession(ctx, id)
		if err != nil {
			return 0, err
		}
		queued[id] = q
	}
	limit := r.forgetTxRecords
	if limit <= 0 {
		limit = forgetTxRecords
	}
	// Bounded transactions: once one has deleted limit records, the next ID begins the next
	// one. Each ID is forgotten whole in one transaction, with its turn when it names a
	// prompt (so a crash never leaves a turn repeating a forgotten prompt).
	found := 0
	for next := 0; next < len(ids); {
		var n, f int
		err := r.writeTxMode(ctx, modeForget, func(tx *wtx) error {
			n, f = next, 0
			tx.change.Origin = feed.Local
			for n < len(ids) && (n == next || len(tx.shortRemoved) < limit) {
				id := ids[n]
				n++
				known, err := recordExists(ctx, tx, id)
				if err != nil {
					return err
				}
				if known || queued[id] {
					f++
				}
				if err := r.forgetWithTurn(ctx, tx, id, ids); err != nil {
					return err
				}
			}
			if r.inForget != nil {
				return r.inForget(len(tx.shortRemoved))
			}
			return nil
		})
		if err != nil {
			return 0, err
		}
		next, found = n, found+f
	}
	return found, r.purgeWAL(ctx)
}

// forgetTxRecords is how many records a forget deletes in one transaction before it commits
// and goes on in the next (Replica.forgetTxRecords overrides it in tests): the writer is
// held for what one transaction does, never for a whole project.
const forgetTxRecords = 2000

// forgetWithTurn forgets id and, when it names a prompt, its turn's records not among ids
// (those are forgotten in their turn), each with its own tombstone and op.
func (r *Replica) forgetWithTurn(ctx context.Context, tx *wtx, id string, ids []string) error {
	todo := []string{id}
	for i := 0; i < len(todo); i++ {
		id := todo[i]
		// A prompt's text is repeated in what its turn produced: forget those too,
		// each with its own tombstone so every device drops them.
		turn, err := turnRecords(ctx, tx, id)
		if err != nil {
			return err
		}
		for _, t := range turn {
			if !slices.Contains(todo, t) && !slices.Contains(ids, t) {
				todo = append(todo, t)
			}
		}
		if err := r.forgetHere(ctx, tx, id); err != nil {
			return err
		}
	}
	return nil
}

// forgetHere forgets id as this device's change: tombstone and purge (forgetTx), and the
// forget op that carries it to every device.
func (r *Replica) forgetHere(ctx context.Context, tx *wtx, id string) error {
	hlc := r.clock.Now()
	if err := forgetTx(ctx, tx, id, hlc, r.cfg.Origin); err != nil {
		return err
	}
	if err := tx.ops().append(ctx, store.OpForget, id, "", hlc, encodeForget(id)); err != nil {
		return err
	}
	tx.record(store.OpForget, id)
	return nil
}

// turnRecords returns, when id names a prompt, the observations and summaries of its turn:
// the observations with its session and prompt number, and the summaries of its session
// made from the prompt's time until the next prompt's.
func turnRecords(ctx context.Context, tx *wtx, id string) ([]string, error) {
	return txIDs(ctx, tx, "find turn of "+id, turnRecordsQuery, id)
}

// txIDs runs q (one column of IDs) in the transaction and returns its rows.
func txIDs(ctx context.Context, tx *wtx, what, q string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var rid string
		if err := rows.Scan(&rid); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, rid)
	}
	return out, rows.Err()
}

const turnRecordsQuery = `WITH p AS (SELECT session_id, prompt_number, created_at FROM prompts WHERE id = ?1),
	nxt AS (SELECT MIN(q.created_at) AS at FROM prompts q, p WHERE q.session_id = p.session_id AND q.prompt_number > p.prompt_number)
	SELECT o.id FROM observations o, p WHERE o.session_id = p.session_id AND o.prompt_number = p.prompt_number
	UNION
	SELECT s.id FROM summaries s, p, nxt WHERE s.session_id = p.session_id AND s.created_at >= p.created_at
		AND (nxt.at IS NULL OR s.created_at < nxt.at)`

const recordExistsQuery = `SELECT (SELECT COUNT(*) FROM observations WHERE id = ?1) + (SELECT COUNT(*) FROM prompts WHERE id = ?1)
	+ (SELECT COUNT(*) FROM summaries WHERE id = ?1) + (SELECT COUNT(*) FROM sessions WHERE id = ?1)`

func recordExists(ctx context.Context, tx *wtx, id string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, recordExistsQuery, id).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("find record: %w", err)
	}
	return n > 0, nil
}

// forgetTx tombstones id and purges it (and, for a session, everything in it).
func forgetTx(ctx context.Context, tx *wtx, id string, hlc uint64, origin string) error {
	if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO tombstones(id, hlc, origin) VALUES (?, ?, ?)", id, hlc, origin); err != nil {
		return fmt.Errorf("tombstone: %w", err)
	}
	gone, err := recordsOf(ctx, tx, id)
	if err != nil {
		return err
	}
	if len(gone) > 0 {
		tx.deletesRecords(gone...)
	}
	for _, q := range forgetStmts {
		if _, err := tx.ExecContext(ctx, q, id); err != nil {
			return fmt.Errorf("forget %s: %w", id, err)
		}
	}
	return nil
}

// recordsOf returns the prompts, observations and summaries that forgetting id deletes:
// the record id names, or every record of the session id names.
func recordsOf(ctx context.Context, tx *wtx, id string) ([]string, error) {
	return txIDs(ctx, tx, "forget "+id, recordsOfQuery, id)
}

const recordsOfQuery = `SELECT id FROM observations WHERE id = ?1 OR session_id = ?1
	UNION ALL SELECT id FROM prompts WHERE id = ?1 OR session_id = ?1
	UNION ALL SELECT id FROM summaries WHERE id = ?1 OR session_id = ?1`

// forgetStmts purge id (a record, or a session with everything in it) once its tombstone
// is in. Each is an index search (TestForgetStatementsUseIndexes).
var forgetStmts = []string{
	// Op payloads of the record and of every record of the session it names.
	`UPDATE ops SET payload = NULL, inrow = 0 WHERE kind != 'forget' AND (record_id = ?1
		OR record_id IN (SELECT id FROM observations WHERE session_id = ?1)
		OR record_id IN (SELECT id FROM prompts WHERE session_id = ?1)
		OR record_id IN (SELECT id FROM summaries WHERE session_id = ?1))`,
	// The session's local processing state keeps the first and last prompt's text.
	`UPDATE sessions SET
		first_prompt = CASE WHEN instr(p.text, first_prompt) > 0 OR instr(first_prompt, p.text) > 0 THEN '' ELSE first_prompt END,
		last_prompt = CASE WHEN instr(p.text, last_prompt) > 0 OR instr(last_prompt, p.text) > 0 THEN '' ELSE last_prompt END
		FROM (SELECT session_id, text FROM prompts WHERE id = ?1) AS p WHERE sessions.id = p.session_id`,
	// Forgetting the session's current turn makes the rest of it private: its events
	// still queued are dropped (purgeQueue) and later ones refused, as a private turn's.
	`UPDATE sessions SET turn_private = 1
		FROM (SELECT session_id, prompt_number FROM prompts WHERE id = ?1) AS p
		WHERE sessions.id = p.session_id AND sessions.prompt_count = p.prompt_number`,
	// Links superseding the record or a record of the session: their ops carry no content,
	// but a link of a record not (yet) stored here is found only by its session.
	`UPDATE ops SET payload = NULL WHERE kind = 'supersede' AND record_id IN (SELECT old_id FROM supersedes WHERE session_id = ?1)`,
	`DELETE FROM supersedes WHERE old_id = ?1 OR session_id = ?1 OR old_id IN (SELECT id FROM observations WHERE session_id = ?1)`,
	`DELETE FROM pins WHERE id = ?1 OR session_id = ?1`,
	`DELETE FROM observations WHERE id = ?1 OR session_id = ?1`,
	`DELETE FROM prompts WHERE id = ?1 OR session_id = ?1`,
	`DELETE FROM summaries WHERE id = ?1 OR session_id = ?1`,
	`DELETE FROM sessions WHERE id = ?1`,
}

// purgeWAL checkpoints the WAL with TRUNCATE so forgotten text survives in no WAL frame
// (the database's own pages were zeroed by secure_delete, the FTS indexes' entries removed
// by their secure-delete option, schema v12), then purges the queue. Its work is the WAL's
// size, bounded by the autocheckpoint, not the database's.
//
// A reader holding an old snapshot (the node's background integrity check, a long export)
// keeps a TRUNCATE checkpoint from finishing: SQLite then answers busy, not an error, and the
// WAL keeps its frames. The forget waits for readers at most forgetCheckpointWait, holding
// the writer no longer, and a retry runs in the background until a checkpoint empties the
// WAL (Close waits for it), so no forgotten text outlives its readers in a WAL frame.
func (r *Replica) purgeWAL(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	wait := forgetCheckpointWait
	if r.forgetWait > 0 {
		wait = r.forgetWait
	}
	if r.longReads.Load() > 0 {
		// The full integrity check after a start, an export or a snapshot served to a
		// peer holds the WAL for seconds: waiting for readers would only delay the
		// forget's answer (50 ms each at 1M, make bench-scale) and then leave the purge
		// to the background retry anyway. One attempt copies what it can.
		wait = 0
	}
	emptied, err := r.truncateWAL(ctx, wait)
	if err != nil {
		return err
	}
	if !emptied {
		r.owePurge()
	}
	return r.purgeQueue(ctx)
}

const (
	// forgetCheckpointWait bounds how long a forget's checkpoint waits for readers.
	forgetCheckpointWait = 50 * time.Millisecond
	// purgeRetryEvery spaces the background checkpoints a busy one leaves owed.
	purgeRetryEvery = time.Second
)

// truncateWAL runs a TRUNCATE checkpoint on the writer, waiting at most wait for readers,
// and reports whether it emptied the WAL.
func (r *Replica) truncateWAL(ctx context.Context, wait time.Duration) (bool, error) {
	conn, err := r.w.Conn(ctx) // the one writer connection, held for all three statements
	if err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	defer conn.Close()
	var was int64
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&was); err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(wait.Milliseconds(), 10)); err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	var busy, frames, moved int
	cerr := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &moved)
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = "+strconv.FormatInt(was, 10)); err != nil && cerr == nil {
		cerr = err
	}
	if cerr != nil {
		return false, fmt.Errorf("checkpoint: %w", cerr)
	}
	return busy == 0, nil
}

// longRead marks a read that may hold a snapshot of the database for seconds until the
// function it returns runs: a forget's checkpoint does not wait for readers meanwhile.
func (r *Replica) longRead() func() {
	r.longReads.Add(1)
	return func() { r.longReads.Add(-1) }
}

// owePurge notes that a forget's text may still sit in WAL frames and makes sure one
// background retry runs until a TRUNCATE checkpoint taken after the latest such forget
// succeeds.
func (r *Replica) owePurge() {
	r.purgeMu.Lock()
	r.purgeOwed++
	start := !r.purgeRunning
	r.purgeRunning = true
	r.purgeMu.Unlock()
	if !start {
		return
	}
	r.mu.Lock()
	if r.closed { // Close checkpoints once more itself
		r.mu.Unlock()
		return
	}
	r.wg.Add(1)
	r.mu.Unlock()
	r.log.Warn("a reader holds the write-ahead log: forgotten text leaves it at the next checkpoint, retried in the background")
	go func() {
		defer r.wg.Done()
		tick := time.NewTicker(purgeRetryEvery)
		defer tick.Stop()
		for {
			select {
			case <-r.done:
				return
			case <-tick.C:
			}
			if r.longReads.Load() > 0 {
				continue // it would wait for nothing, holding the writer meanwhile
			}
			r.purgeMu.Lock()
			owed := r.purgeOwed
			r.purgeMu.Unlock()
			emptied, err := r.truncateWAL(context.Background(), forgetCheckpointWait)
			if err != nil || !emptied {
				continue
			}
			r.purgeMu.Lock()
			if r.purgeOwed == owed { // no forget came since this checkpoint began
				r.purgeRunning = false
				r.purgeMu.Unlock()
				r.log.Info("write-ahead log emptied after a forget")
				return
			}
			r.purgeMu.Unlock()
		}
	}()
}

// purgeQueue removes what a forget leaves in the queue database: events still waiting
// whose session is forgotten are dropped, and the file is vacuumed (at the first forget
// after open) and its WAL truncated, so the raw hook event of a forgotten record survives
// neither in free pages (deleted before secure_delete was on) nor in old WAL frames. The
// queue holds only events not yet turned into records, so the vacuum is small.
func (r *Replica) purgeQueue(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	// Dead letters of a forgotten session go too.
	if _, err := r.q.ExecContext(ctx, "DELETE FROM dead WHERE session_id IN (SELECT value FROM json_each(?))", string(mustJSON(r.tombstonedOf(ctx)))); err != nil {
		return fmt.Errorf("purge queue: dead letters: %w", err)
	}
	rows, err := r.q.QueryContext(ctx, "SELECT DISTINCT session_id FROM pending")
	if err != nil {
		return fmt.Errorf("purge queue: %w", err)
	}
	var sessions []string
	for rows.Next() {
		var sid string
		if err := rows.Scan(&sid); err != nil {
			rows.Close()
			return fmt.Errorf("purge queue: %w", err)
		}
		sessions = append(sessions, sid)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("purge queue: %w", err)
	}
	for _, sid := range sessions {
		var one int
		err := r.r.QueryRowContext(ctx, "SELECT 1 FROM tombstones WHERE id = ?", sid).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			if err := r.purgePrivateTurn(ctx, sid); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("purge queue: %w", err)
		}
		res, err := r.q.ExecContext(ctx, "DELETE FROM pending WHERE session_id = ?", sid)
		if err != nil {
			return fmt.Errorf("purge queue: %w", err)
		}
		n, _ := res.RowsAffected()
		r.pending.Add(-n)
	}
	// Once per open: what was deleted before this process set secure_delete on (an older
	// build's file) leaves free pages; every later delete zeroes its bytes itself. The
	// queue's one connection is also the hooks' enqueue, which waits behind a VACUUM.
	if !r.queueVacuumed.Load() {
		if _, err := r.q.ExecContext(ctx, "VACUUM"); err != nil {
			return fmt.Errorf("purge queue: vacuum: %w", err)
		}
		r.queueVacuumed.Store(true)
	}
	if _, err := r.q.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("purge queue: checkpoint: %w", err)
	}
	return nil
}

// purgePrivateTurn drops the queued tool calls and answers of a session whose current turn
// is private (a forgotten prompt's turn is): the events queued before the session's next
// queued prompt belong to that turn. The session's other events stay.
func (r *Replica) purgePrivateTurn(ctx context.Context, sid string) error {
	var priv int
	err := r.r.QueryRowContext(ctx, "SELECT turn_private FROM sessions WHERE id = ?", sid).Scan(&priv)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && priv == 0) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("purge queue: %w", err)
	}
	res, err := r.q.ExecContext(ctx, `DELETE FROM pending WHERE session_id = ?1 AND kind IN ('observation', 'summarize')
		AND id < COALESCE((SELECT MIN(id) FROM pending WHERE session_id = ?1 AND kind = 'prompt'), 9223372036854775807)`, sid)
	if err != nil {
		return fmt.Errorf("purge queue: %w", err)
	}
	n, _ := res.RowsAffected()
	r.pending.Add(-n)
	return nil
}

// tombstonedOf returns the dead letters' session IDs that carry a tombstone.
func (r *Replica) tombstonedOf(ctx context.Context) []string {
	rows, err := r.q.QueryContext(ctx, "SELECT DISTINCT session_id FROM dead")
	if err != nil {
		return nil
	}
	var sids []string
	for rows.Next() {
		var sid string
		if rows.Scan(&sid) == nil {
			sids = append(sids, sid)
		}
	}
	rows.Close()
	out := []string{}
	for _, sid := range sids {
		var one int
		if r.r.QueryRowContext(ctx, "SELECT 1 FROM tombstones WHERE id = ?", sid).Scan(&one) == nil {
			out = append(out, sid)
		}
	}
	return out
}

// internFilePaths is migration 15's Go step: observation_files rows name an interned path
// (file_paths) instead of holding the path and its name. A table already in that shape is
// left as it is, so the migration can run again.
func internFilePaths(ctx context.Context, tx *sql.Tx) error {
	var interned int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_table_info('observation_files') WHERE name = 'path_id'").Scan(&interned); err != nil {
		return fmt.Errorf("intern file paths: %w", err)
	}
	if interned > 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, internFilePathsSQL); err != nil {
		return fmt.Errorf("intern file paths: %w", err)
	}
	return nil
}

// internFilePathsSQL moves observation_files to interned paths (migration 15).
const internFilePathsSQL = `CREATE TABLE file_paths (
    id   INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL             -- the last component of path (FileName)
);
CREATE INDEX file_paths_name ON file_paths(name);
INSERT INTO file_paths(path, name) SELECT path, MIN(name) FROM observation_files GROUP BY path;

CREATE TABLE observation_paths (
    path_id   INTEGER NOT NULL REFERENCES file_paths(id),
    obs_rowid INTEGER NOT NULL REFERENCES observations(rowid) ON DELETE CASCADE,
    modified  INTEGER NOT NULL,
    PRIMARY KEY (path_id, obs_rowid)
) WITHOUT ROWID;
INSERT INTO observation_paths(path_id, obs_rowid, modified)
    SELECT p.id, f.obs_rowid, f.modified FROM observation_files f JOIN file_paths p ON p.path = f.path
    ORDER BY 1, 2;
DROP TABLE observation_files;
ALTER TABLE observation_paths RENAME TO observation_files;
CREATE INDEX observation_files_obs ON observation_files(obs_rowid);
CREATE TRIGGER observation_files_ad AFTER DELETE ON observation_files
WHEN NOT EXISTS (SELECT 1 FROM observation_files WHERE path_id = old.path_id)
BEGIN
    DELETE FROM file_paths WHERE id = old.path_id;
END;`

package team

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/store"
)

// Kind of the placeholder a rejected op becomes locally: an op kind no replica interprets,
// stored without content, so the stream's seqs stay contiguous and the op is never fetched
// again.
const kindRejected = "team-rejected"

// admitEvery is how often an admin's pulling node looks for devices to admit.
const admitEvery = time.Second

// The team-state writes both pulls (projects, admin changes) make: a refused op, a cursor.
const (
	sqlReject = `INSERT OR IGNORE INTO rejected(pos, origin, tseq, kind, record_id, reason) VALUES (?, ?, ?, ?, ?, ?)`
	sqlCursor = `INSERT INTO cursors(project, pos) VALUES (?, ?) ON CONFLICT(project) DO UPDATE SET pos = excluded.pos`
)

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
	// Admin changes first: the project pulls stop at the position read with them.
	high, err := t.pullAdmins(ctx, c)
	if err != nil {
		return 0, fmt.Errorf("team pull: %w", err)
	}
	log := t.roster(ctx)
	if _, refusal := log.member(t.origin, math.MaxInt64); refusal != "" && log.everAdmitted(t.origin, math.MaxInt64) {
		return 0, fmt.Errorf("team pull: %w", ErrRemoved)
	}
	if slices.Contains(log.now(), t.origin) && t.cfg.Now().Sub(t.admitted) >= admitEvery {
		// An admin's node admits the devices that joined since (Admit).
		t.admitted = t.cfg.Now()
		if _, err := t.admit(ctx, c); err != nil {
			t.note(fmt.Errorf("team admit: %w", err))
		}
	}
	total := 0
	var errs []error
	for _, project := range shared {
		// One project's trouble (a cluster error, a local one) leaves the others pulling.
		n, err := t.retryHeld(ctx, project)
		total += n
		if err == nil {
			n, err = t.pullProject(ctx, c, project, high, progress)
			total += n
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("team pull %s: %w", project, err))
		}
	}
	t.mu.Lock()
	t.pulled += total
	t.mu.Unlock()
	if len(errs) > 0 {
		return total, errors.Join(errs...)
	}
	return total, nil
}

// pulled is one batch of a project's ops as the fetch stage hands it on: sigErr[i] is op i's
// signature check (nil: verified, or this device's own op, checked against the outbox
// when applied).
type pulled struct {
	ops    []Op
	sigErr []error
}

// pullProject runs the pull as a pipeline: one goroutine fetches batches past the cursor
// and verifies their signatures on every core, up to PullAhead batches ahead, while this
// one checks rights and applies them in order. The cursor on disk moves only with an
// applied batch, so stopping anywhere (an error, Close) loses nothing and applies nothing
// twice: the batches fetched ahead are simply fetched again.
func (t *Team) pullProject(ctx context.Context, c *rq, project string, high int64, progress func(Progress)) (int, error) {
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
	apply := func(b pulled) error {
		n, err := t.applyPulled(ctx, b)
		if err != nil {
			return err
		}
		done += n
		read += len(b.ops)
		if progress != nil {
			progress(Progress{Project: project, Done: read, Left: max(left-read, 0)})
		}
		return nil
	}
	if t.cfg.PullAhead < 0 { // one batch at a time
		for {
			b, err := t.fetch(ctx, c, project, cursor, high)
			if err != nil || len(b.ops) == 0 {
				return done, err
			}
			if err := apply(b); err != nil {
				return done, err
			}
			cursor = b.ops[len(b.ops)-1].Pos
		}
	}
	fctx, cancel := context.WithCancel(ctx)
	batches := make(chan pulled, t.cfg.PullAhead)
	var fetchErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(batches)
		for after := cursor; ; {
			b, err := t.fetch(fctx, c, project, after, high)
			if err != nil || len(b.ops) == 0 {
				fetchErr = err
				return
			}
			select {
			case batches <- b:
			case <-fctx.Done():
				fetchErr = fctx.Err() // a stopped pull is not a finished one
				return
			}
			after = b.ops[len(b.ops)-1].Pos
		}
	})
	defer func() {
		cancel()
		for range batches { // let the fetcher end, drop what it read ahead
		}
		wg.Wait()
	}()
	for b := range batches {
		if err := apply(b); err != nil {
			return done, err
		}
	}
	wg.Wait()
	return done, fetchErr
}

// fetch reads the next batch of project's ops in (after, high] and verifies their
// signatures.
func (t *Team) fetch(ctx context.Context, c *rq, project string, after, high int64) (pulled, error) {
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT pos, origin, tseq, project, kind, record_id, hlc, `+sqlCappedPayload+`, payload_hash, author, sig, length(payload)
		FROM team_ops WHERE project = ? AND pos > ? AND pos <= ? ORDER BY pos LIMIT ?`, project, after, high, t.cfg.PullBatch)})
	if err != nil || len(res) == 0 || len(res[0].Values) == 0 {
		return pulled{}, err
	}
	ops, err := decodeOps(res[0].Values)
	if err != nil {
		return pulled{}, err
	}
	return pulled{ops: ops, sigErr: verifyAll(ops, t.origin, t.cfg.VerifyWorkers)}, nil
}

// verifyAll checks the signatures of ops on up to workers goroutines (Ed25519 verification
// is most of a pull's CPU); this device's own ops (origin own) are left to the apply, which
// recognises them by the outbox's copy without a verify.
func verifyAll(ops []Op, own string, workers int) []error {
	errs := make([]error, len(ops))
	one := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if ops[i].Origin != own {
				errs[i] = verify(ops[i])
			}
		}
	}
	const least = 64 // below this a goroutine costs more than it saves
	workers = min(workers, (len(ops)+least-1)/least)
	if workers <= 1 {
		one(0, len(ops))
		return errs
	}
	var wg sync.WaitGroup
	per := (len(ops) + workers - 1) / workers
	for lo := 0; lo < len(ops); lo += per {
		wg.Go(func() { one(lo, min(lo+per, len(ops))) })
	}
	wg.Wait()
	return errs
}

// sqlCappedPayload selects an op's payload only when it fits the record size limit: a
// larger one (an attacker's 60 MiB row) is never transferred — its length, the row's 12th
// column, is enough to refuse it — so no batch grows past what a request can carry in time
// and no project stalls behind it.
var sqlCappedPayload = fmt.Sprintf(`CASE WHEN length(payload) > %d THEN NULL ELSE payload END`, memory.MaxRecordSize)

// decodeOps reads op rows of 11 columns (pos … sig), or 12 with the payload's length last
// (sqlCappedPayload: a payload over the limit comes as NULL, its length in Oversize).
func decodeOps(rows [][]any) ([]Op, error) {
	ops := make([]Op, 0, len(rows))
	for _, r := range rows {
		if len(r) != 11 && len(r) != 12 {
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
		if len(r) == 12 && r[7] == nil {
			if n, err := int64Of(r[11]); err == nil && n > memory.MaxRecordSize {
				op.Oversize = n
			}
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// applyPulled checks the rights of a verified batch and applies it in one replica
// transaction; then it records the authors, the rejections and the cursor in one
// transaction of the team state. A crash in between pulls the batch again, which the
// replica drops as duplicates.
func (t *Team) applyPulled(ctx context.Context, b pulled) (int, error) {
	ops := b.ops
	tx, err := t.st.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	admins, err := t.loadAdmins(ctx, tx)
	if err != nil {
		return 0, err
	}
	q, err := prepareBatch(ctx, tx)
	if err != nil {
		return 0, err
	}
	defer q.close()
	var apply []store.Op
	var pos []int64              // apply[i]'s cluster position
	named := map[string]string{} // authors first seen in this batch
	for i, op := range ops {
		if op.Origin == t.origin {
			// Own op: the replica has it. A row under this device's name that this device
			// did not sign is a forgery all the same (Ed25519 signatures are deterministic:
			// the outbox holds the very bytes).
			var mine int
			if err := q.mine.QueryRowContext(ctx, op.Project, op.TSeq, op.Sig).Scan(&mine); err != nil {
				return 0, err
			}
			if mine > 0 {
				continue
			}
			if err := verify(op); err != nil {
				// Squatted: someone wrote a row under this device's (origin, project, tseq).
				// Members refuse it (forged) and apply this device's own op, which the
				// cluster's key (it includes the signature) lets in beside it; the pusher is
				// told, since nothing else would tell it.
				cause := fmt.Sprintf("op %d of %s under this device's ID (cluster position %d) is not signed by this device: a member with write access wrote it; members refuse it and apply this device's own op %d (%v)",
					op.TSeq, op.Project, op.Pos, op.TSeq, err)
				if _, err := q.reject.ExecContext(ctx, op.Pos, op.Origin, op.TSeq, op.Kind, op.RecordID, err.Error()); err != nil {
					return 0, err
				}
				if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO squatted(pos, project, tseq, error) VALUES (?, ?, ?, ?)`, op.Pos, op.Project, op.TSeq, cause); err != nil {
					return 0, err
				}
				t.cfg.Logger.Error("team op squatted", "project", op.Project, "tseq", op.TSeq, "pos", op.Pos)
			}
			continue
		}
		lop := store.Op{Origin: LocalOrigin(op.Origin, op.Project), Seq: op.TSeq, HLC: op.HLC, Kind: op.Kind, RecordID: op.RecordID, Payload: op.Payload}
		pos = append(pos, op.Pos)
		// The server is not trusted: a member with write access can insert any row, so every
		// op proves its origin by signature (verified when fetched); a forged op is not the
		// origin's, whose real op with this tseq is another row.
		forged, reason := b.sigErr[i] != nil, ""
		if forged {
			reason = b.sigErr[i].Error()
		} else {
			reason = t.checkRights(ctx, q, op, admins, named)
		}
		if reason != "" {
			if _, err := q.reject.ExecContext(ctx, op.Pos, op.Origin, op.TSeq, op.Kind, op.RecordID, reason); err != nil {
				return 0, err
			}
			t.cfg.Logger.Warn("team op rejected", "origin", op.Origin, "tseq", op.TSeq, "kind", op.Kind, "record", op.RecordID, "reason", reason)
			if forged {
				pos = pos[:len(pos)-1]
				continue
			}
			// The origin's own op, refused: keep its place, with nothing of it (its stamp
			// neither, which may be what was refused).
			lop.Kind, lop.Payload, lop.HLC = kindRejected, nil, 0
		} else {
			lop.Payload = cleanPayload(op.Payload)
			if op.Kind != store.OpForget && op.Kind != store.OpSupersede {
				if _, err := q.record.ExecContext(ctx, op.RecordID, op.Origin, op.Project); err != nil {
					return 0, err
				}
			}
		}
		apply = append(apply, lop)
	}
	applied := 0
	if len(apply) > 0 {
		if applied, err = t.applyHolding(ctx, tx, q, apply, pos); err != nil {
			return 0, fmt.Errorf("apply team ops: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, sqlCursor,
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

// batchStmts are the team state statements a pulled batch runs per op, prepared once per
// batch.
type batchStmts struct {
	mine, author, pin, owner, record, reject *sql.Stmt
}

func prepareBatch(ctx context.Context, tx *sql.Tx) (*batchStmts, error) {
	q := &batchStmts{}
	for _, p := range []struct {
		s   **sql.Stmt
		sql string
	}{
		{&q.mine, `SELECT COUNT(*) FROM outbox WHERE project = ? AND tseq = ? AND sig = ?`},
		{&q.author, `SELECT author FROM authors WHERE origin = ?`},
		{&q.pin, `INSERT INTO authors(origin, author) VALUES (?, ?)`},
		{&q.owner, `SELECT origin, project FROM records WHERE id = ?`},
		{&q.record, `INSERT OR IGNORE INTO records(id, origin, project) VALUES (?, ?, ?)`},
		{&q.reject, sqlReject},
	} {
		s, err := tx.PrepareContext(ctx, p.sql)
		if err != nil {
			q.close()
			return nil, fmt.Errorf("team pull: %w", err)
		}
		*p.s = s
	}
	return q, nil
}

func (q *batchStmts) close() {
	for _, s := range []*sql.Stmt{q.mine, q.author, q.pin, q.owner, q.record, q.reject} {
		if s != nil {
			s.Close()
		}
	}
}

// checkRights returns why a verified op must be refused, or "": it keeps the author name
// its origin first used, does not claim a record another device created, and, as a
// tombstone, comes from the record's author device or an admin in force at its position.
func (t *Team) checkRights(ctx context.Context, q *batchStmts, op Op, admins adminLog, named map[string]string) string {
	// What is applied is the payload: it must say what the signed row says, or a signature
	// over one record would carry another (DESIGN.md, "Trust model").
	if reason := checkPayload(op); reason != "" {
		return reason
	}
	if reason := t.checkFarFuture(op); reason != "" {
		return reason
	}
	// The author is the key that signed, admitted by an admin before this position under
	// one name, and not removed before it: the same verdict on every member.
	name, refusal := admins.member(op.Origin, op.Pos)
	if refusal != "" {
		return refusal
	}
	if name != op.Author {
		return fmt.Sprintf("device %s signs as %q, registered as %q", op.Origin, op.Author, name)
	}
	var pinned string
	err := q.author.QueryRowContext(ctx, op.Origin).Scan(&pinned)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := q.pin.ExecContext(ctx, op.Origin, op.Author); err != nil {
			return "store author: " + err.Error()
		}
		named[op.Origin] = op.Author
	case err != nil:
		return "read author: " + err.Error()
	}
	if op.Kind == store.OpSession {
		return ""
	}
	var owner, project string
	err = q.owner.QueryRowContext(ctx, op.RecordID).Scan(&owner, &project)
	if op.Kind == store.OpSupersede {
		// A correction hides the record it names from every member's context: like a
		// tombstone, its author's or an admin's, of the row's project; the replacement a
		// record of that project this member already holds (positions order the stream).
		return t.checkCorrection(ctx, q, op, owner, project, err, admins)
	}
	if op.Kind != store.OpForget {
		if err == nil && owner != op.Origin {
			return fmt.Sprintf("record %s belongs to %s", op.RecordID, owner)
		}
		return ""
	}
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Sprintf("tombstone for unknown record %s", op.RecordID)
	}
	if err != nil {
		return "read record: " + err.Error()
	}
	if project != op.Project {
		return fmt.Sprintf("tombstone in %s for record %s of %s", op.Project, op.RecordID, project)
	}
	if owner != op.Origin && !slices.Contains(admins.at(op.Pos), op.Origin) {
		return fmt.Sprintf("tombstone for %s from %s, neither its author nor an admin", op.RecordID, op.Origin)
	}
	return ""
}

func (t *Team) lagOf(ctx context.Context, c *rq, project string, cursor int64) (int, error) {
	res, err := c.query(ctx, levelWeak, []stmt{st(`SELECT COUNT(*) FROM team_ops WHERE project = ? AND pos > ?`, project, cursor)})
	if err != nil {
		return 0, err
	}
	n, err := res[0].scalar()
	return int(n), err
}

// checkCorrection judges a supersede op whose replaced record's owner and project the
// caller read (err: that read's error).
func (t *Team) checkCorrection(ctx context.Context, q *batchStmts, op Op, owner, project string, err error, admins adminLog) string {
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Sprintf("correction of unknown record %s", op.RecordID)
	case err != nil:
		return "read record: " + err.Error()
	case project != op.Project:
		return fmt.Sprintf("correction in %s of record %s of %s", op.Project, op.RecordID, project)
	case owner != op.Origin && !slices.Contains(admins.at(op.Pos), op.Origin):
		return fmt.Sprintf("correction of %s from %s, neither its author nor an admin", op.RecordID, op.Origin)
	}
	if op.Payload == nil {
		return ""
	}
	var p struct {
		By string `json:"by"`
	}
	_ = json.Unmarshal(op.Payload, &p) // checkPayload read it
	var byOwner, byProject string
	if err := q.owner.QueryRowContext(ctx, p.By).Scan(&byOwner, &byProject); err != nil || byProject != op.Project {
		return fmt.Sprintf("correction of %s by %s, not a record of %s here", op.RecordID, p.By, op.Project)
	}
	return ""
}

// payloadHead is what every record payload says of itself.
type payloadHead struct {
	HLC     uint64 `json:"hlc"`
	ID      string `json:"id"`
	Project string `json:"project"`
	Origin  string `json:"origin"`
}

// checkPayload returns why an op's payload must not be applied, or "": it fits the size
// limit every path keeps (memory.MaxRecordSize), and it names the record, project and
// origin of the signed row — the replica applies the payload, the rights are judged on the
// row. A purged op (payload NULL) applies nothing of its own and passes.
func checkPayload(op Op) string {
	size := int64(len(op.Payload))
	if op.Oversize > 0 {
		size = op.Oversize // left on the cluster (sqlCappedPayload)
	}
	if size > memory.MaxRecordSize {
		return fmt.Sprintf("%s %s is %d KiB, over the %d KiB limit of one record", op.Kind, op.RecordID, size>>10, memory.MaxRecordSize>>10)
	}
	if op.Payload == nil {
		return ""
	}
	var h payloadHead
	if err := json.Unmarshal(op.Payload, &h); err != nil {
		return fmt.Sprintf("%s %s: payload is not a record: %v", op.Kind, op.RecordID, err)
	}
	switch op.Kind {
	case store.OpForget:
		if h.ID != op.RecordID {
			return fmt.Sprintf("tombstone's payload names record %s, its signed row %s", h.ID, op.RecordID)
		}
		return ""
	case store.OpSupersede:
		if h.ID != op.RecordID {
			return fmt.Sprintf("correction's payload names record %s, its signed row %s", h.ID, op.RecordID)
		}
		if h.Project != op.Project {
			return fmt.Sprintf("correction of %s: payload names project %q, its signed row %q", op.RecordID, h.Project, op.Project)
		}
		return ""
	case store.OpSession, store.OpPrompt, store.OpObservation, store.OpSummary:
	default:
		return fmt.Sprintf("op kind %q is not one a shared project carries", op.Kind)
	}
	switch {
	case h.ID != op.RecordID:
		return fmt.Sprintf("%s payload names record %s, its signed row %s", op.Kind, h.ID, op.RecordID)
	case h.Project != op.Project:
		return fmt.Sprintf("%s %s: payload names project %q, its signed row %q", op.Kind, op.RecordID, h.Project, op.Project)
	case h.Origin != op.Origin:
		return fmt.Sprintf("%s %s: payload claims author device %s, signed by %s", op.Kind, op.RecordID, h.Origin, op.Origin)
	}
	return ""
}

// cleanPayload is a pulled payload through the privacy gate every record passes on its
// way in (memory tags stripped, secrets redacted): a member's memnode of another version,
// or a member writing rows by hand, must not put into this replica what its own hooks
// would have kept out.
func cleanPayload(p []byte) []byte {
	if p == nil {
		return nil
	}
	c, err := privacy.CleanJSON(p)
	if err != nil || bytes.Equal(c, p) {
		return p // checkPayload refused what is not JSON
	}
	return c
}

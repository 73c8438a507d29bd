package replica

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/store"
)

// A snapshot is the replicated part of this database at one version vector: the record rows
// (sessions, prompts, observations, summaries, devices, tombstones) and the op-log rows,
// placeholders (compacted seqs, which have no row) staying holes. A new device installs it
// by bulk insert, one transaction per chunk, instead of replaying every op, and then holds
// what the server held under that vector: it can serve every op to anyone, as the server
// can. Rows travel in key order, so an install that was cut resumes after the last row it
// committed — from the same device or another one, at the same vector or a later one.
// Local state never goes: the queue, vectors, settings, group state, short IDs and file
// index (derived, rebuilt on install), a session's processing columns, and records of
// local-only projects (a record row travels only when an op of it is in the log, which is
// exactly when op replay would have created it). See DESIGN.md, "Snapshots".

// snapshotTable is one replicated table as a snapshot carries it. The column lists are the
// snapshot format: sender and receiver must agree on them exactly. The key is the first
// column (and, for the op-log, the second): rows travel in key order.
type snapshotTable struct {
	name    string
	cols    []string
	filter  string // which rows travel (x is the table)
	insert  string
	kind    string // change-feed kind of the table's records, "" for none
	hlcCol  int    // index of the stamp column checked against the clock bound, -1 for none
	sessCol int    // index of the session_id column, -1 for none: a forgotten session's rows never land
}

// read returns the query of t's rows after the cursor (from's key, when from is in t), in
// key order, and its arguments.
func (t snapshotTable) read(from store.SnapshotCursor) (string, []any) {
	q := "SELECT " + strings.Join(t.cols, ", ") + " FROM " + t.name + " x WHERE " + t.filter
	if t.name == "ops" {
		// The op-log names origins by number (migration 16); the snapshot names them, in
		// their order: origins by name, each one's ops by seq (ops_seq).
		q = "SELECT g.origin, x.seq, x.hlc, x.kind, x.record_id, x.payload, x.inrow FROM origins g JOIN ops x ON x.origin_id = g.id WHERE " + t.filter
	}
	var args []any
	if from.Table == t.name {
		if t.name == "ops" {
			q += " AND g.origin >= ? AND (g.origin > ? OR x.seq > ?)"
			args = append(args, from.Key, from.Key, int64(min(from.Seq, 1<<62)))
		} else {
			q += " AND x." + t.cols[0] + " > ?"
			args = append(args, from.Key)
		}
	}
	if t.name == "ops" {
		return q + " ORDER BY g.origin, x.seq", args
	}
	return q + " ORDER BY x." + t.cols[0], args
}

// cursor is the resume point after row (a row of t).
func (t snapshotTable) cursor(row []any) store.SnapshotCursor {
	c := store.SnapshotCursor{Table: t.name}
	c.Key, _ = row[0].(string)
	if t.name == "ops" {
		if s, ok := row[1].(int64); ok && s > 0 {
			c.Seq = uint64(s)
		}
	}
	return c
}

var snapshotTables = []snapshotTable{
	{name: "sessions", kind: store.OpSession, hlcCol: 7, sessCol: -1,
		cols:   []string{"id", "project", "platform", "started_at", "ended_at", "status", "origin", "hlc"},
		filter: `EXISTS (SELECT 1 FROM ops WHERE record_id = x.id AND kind = 'session')`,
		// A register: a session may already be here (ops of another origin pulled while the
		// install was cut); the later write wins, as upsertSession decides.
		insert: sessionUpsert},
	{name: "prompts", kind: store.OpPrompt, hlcCol: 7, sessCol: 1,
		cols:   []string{"id", "session_id", "project", "prompt_number", "text", "created_at", "origin", "hlc"},
		filter: `EXISTS (SELECT 1 FROM ops WHERE record_id = x.id)`,
		insert: `INSERT OR IGNORE INTO prompts(id, session_id, project, prompt_number, text, created_at, origin, hlc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
	{name: "observations", kind: store.OpObservation, hlcCol: 18, sessCol: 1,
		cols:   strings.Fields(strings.ReplaceAll(obsColumns, ",", " ")),
		filter: `EXISTS (SELECT 1 FROM ops WHERE record_id = x.id)`,
		insert: `INSERT OR IGNORE INTO observations(` + obsColumns + `) VALUES (` + placeholders(19) + `)`},
	{name: "summaries", kind: store.OpSummary, hlcCol: len(strings.Split(sumColumns, ",")) - 1, sessCol: 1,
		cols:   strings.Fields(strings.ReplaceAll(sumColumns, ",", " ")),
		filter: `EXISTS (SELECT 1 FROM ops WHERE record_id = x.id)`,
		insert: `INSERT OR IGNORE INTO summaries(` + sumColumns + `) VALUES (` + placeholders(len(strings.Split(sumColumns, ","))) + `)`},
	{name: "devices", kind: store.OpDevice, hlcCol: 2, sessCol: -1,
		cols:   []string{"origin", "name", "hlc", "writer"},
		filter: `EXISTS (SELECT 1 FROM ops WHERE record_id = 'device:' || x.origin)`,
		// The receiver's own device row is the one register it may already hold: LWW.
		insert: `INSERT INTO devices(origin, name, hlc, writer) VALUES (?, ?, ?, ?)
			ON CONFLICT(origin) DO UPDATE SET name = excluded.name, hlc = excluded.hlc, writer = excluded.writer
			WHERE excluded.hlc > devices.hlc OR (excluded.hlc = devices.hlc AND excluded.writer > devices.writer)`},
	{name: "tombstones", hlcCol: 1, sessCol: -1,
		cols:   []string{"id", "hlc", "origin"},
		filter: `EXISTS (SELECT 1 FROM ops WHERE record_id = x.id AND kind = 'forget')`,
		insert: `INSERT OR IGNORE INTO tombstones(id, hlc, origin) VALUES (?, ?, ?)`},
	{name: "ops", hlcCol: 2, sessCol: -1,
		cols:   []string{"origin", "seq", "hlc", "kind", "record_id", "payload", "inrow"},
		filter: `1`,
		insert: `INSERT OR IGNORE INTO ops(origin_id, seq, hlc, kind, record_id, payload, inrow) VALUES (?, ?, ?, ?, ?, ?, ?)`},
}

// snapshotChunkRows bounds the rows of one chunk, whatever their size.
const snapshotChunkRows = 5000

// Snapshot reads the replicated state in one read transaction and hands it to emit: first
// the beginning (the vector the rows belong to and how many rows the whole snapshot
// carries), then the rows after from, table by table in key order, in chunks of at most
// chunkBytes (or one larger row alone), then the end with the vector again. emit's error
// ends the snapshot. A replica still installing a snapshot serves none
// (ErrSnapshotIncomplete).
func (r *Replica) Snapshot(ctx context.Context, from store.SnapshotCursor, chunkBytes int, emit func(store.SnapshotChunk) error) error {
	start := slices.IndexFunc(snapshotTables, func(t snapshotTable) bool { return t.name == from.Table })
	if from.Table == "" {
		start = 0
	} else if start < 0 {
		return fmt.Errorf("snapshot from table %q: %w", from.Table, store.ErrBadSnapshot)
	}
	defer r.longRead()()
	tx, err := r.r.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer tx.Rollback()
	// The vector first: in WAL a read transaction sees one commit from its first read on.
	vv, err := readVersionVector(ctx, tx)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if _, active, err := readInstall(ctx, tx); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	} else if active {
		return fmt.Errorf("snapshot: %w", store.ErrSnapshotIncomplete)
	}
	var total int64
	if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sessions) + (SELECT count(*) FROM prompts)
		+ (SELECT count(*) FROM observations) + (SELECT count(*) FROM summaries) + (SELECT count(*) FROM devices)
		+ (SELECT count(*) FROM tombstones) + (SELECT count(*) FROM ops)`).Scan(&total); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := emit(store.SnapshotChunk{Begin: true, VV: vv, Total: total}); err != nil {
		return err
	}
	for _, t := range snapshotTables[start:] {
		if err := snapshotRows(ctx, tx, t, from, chunkBytes, emit); err != nil {
			return err
		}
	}
	return emit(store.SnapshotChunk{VV: vv})
}

func snapshotRows(ctx context.Context, tx *sql.Tx, t snapshotTable, from store.SnapshotCursor, chunkBytes int, emit func(store.SnapshotChunk) error) error {
	q, args := t.read(from)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", t.name, err)
	}
	defer rows.Close()
	chunk := store.SnapshotChunk{Table: t.name, Columns: t.cols}
	size := 0
	hashCol := slices.Index(t.cols, "content_hash") // stored as bytes, carried as text
	for rows.Next() {
		vals := make([]any, len(t.cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("snapshot %s: %w", t.name, err)
		}
		if hashCol >= 0 {
			if vals[hashCol], err = hashText(vals[hashCol]); err != nil {
				return fmt.Errorf("snapshot %s: %w", t.name, err)
			}
		}
		rowSize := 0
		for i, v := range vals {
			switch x := v.(type) {
			case string:
				rowSize += len(x)
			case []byte:
				vals[i] = slices.Clone(x)
				rowSize += len(x)
			}
			rowSize += 2
		}
		// A chunk is at most chunkBytes, or one row alone: a large record never rides on
		// top of a full chunk (the wire's frame limit).
		if len(chunk.Rows) > 0 && (size+rowSize > chunkBytes || len(chunk.Rows) >= snapshotChunkRows) {
			if err := emit(chunk); err != nil {
				return err
			}
			chunk.Rows, size = nil, 0
		}
		chunk.Rows = append(chunk.Rows, vals)
		size += rowSize
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("snapshot %s: %w", t.name, err)
	}
	if len(chunk.Rows) > 0 {
		return emit(chunk)
	}
	return nil
}

// IsBlank reports whether the replica holds nothing of another origin and no record: what a
// device that may install a snapshot looks like (its own device-name op is allowed).
func (r *Replica) IsBlank(ctx context.Context) (bool, error) {
	return isBlank(ctx, r.r, r.cfg.Origin)
}

func isBlank(ctx context.Context, q rowQuerier, self string) (bool, error) {
	var held bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sessions) OR EXISTS (SELECT 1 FROM prompts)
		OR EXISTS (SELECT 1 FROM observations) OR EXISTS (SELECT 1 FROM summaries) OR EXISTS (SELECT 1 FROM tombstones)
		OR EXISTS (SELECT 1 FROM ops WHERE origin_id IS NOT `+originIDOf+` OR kind != 'device')
		OR EXISTS (SELECT 1 FROM version_vector WHERE origin != ?1)`, self).Scan(&held)
	if err != nil {
		return false, fmt.Errorf("blank: %w", err)
	}
	return !held, nil
}

// installKey is the meta row of an install that began and has not ended.
const installKey = "snapshot_install"

// install is the state of a snapshot install between its chunks, kept in meta so a cut
// connection or a restart resumes where it stopped.
type install struct {
	// VV is the smallest vector of every snapshot this install took rows from (per origin,
	// the minimum): what the rows installed, all together, are sure to hold. The end writes
	// it as this replica's vector; op replay brings the rest.
	VV store.VersionVector `json:"vv"`
	// Cur is the vector of the snapshot being received: its ops must lie within it.
	Cur   store.VersionVector  `json:"cur"`
	From  store.SnapshotCursor `json:"from"`
	Rows  int64                `json:"rows"`
	Total int64                `json:"total"`
}

func readInstall(ctx context.Context, q rowQuerier) (install, bool, error) {
	var raw string
	err := q.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = ?", installKey).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return install{}, false, nil
	}
	if err != nil {
		return install{}, false, fmt.Errorf("read snapshot install: %w", err)
	}
	var in install
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return install{}, false, fmt.Errorf("read snapshot install: %w", err)
	}
	return in, true, nil
}

func writeInstall(ctx context.Context, tx *wtx, in install) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("write snapshot install: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", installKey, string(raw)); err != nil {
		return fmt.Errorf("write snapshot install: %w", err)
	}
	return nil
}

// SnapshotProgress reports an install that began and has not ended: where it resumes and
// how far it is.
func (r *Replica) SnapshotProgress(ctx context.Context) (store.SnapshotProgress, error) {
	in, active, err := readInstall(ctx, r.r)
	if err != nil || !active {
		return store.SnapshotProgress{}, err
	}
	return store.SnapshotProgress{Active: true, From: in.From, Rows: in.Rows, Total: in.Total}, nil
}

// InstallSnapshot installs a snapshot, read chunk by chunk with next: the beginning, rows,
// the end. Chunks of one table are installed in batches (installBatchRows), each one
// transaction that also records where the install stands, so an error from next (a cut
// connection, a timeout: the batch gathered so far is installed first), a malformed chunk
// or a crash keeps every batch committed before it, and the next InstallSnapshot — of a snapshot from the cursor
// SnapshotProgress returns, from any device — goes on from there. The replica must be blank
// or in the middle of an install (ErrNotBlank). The rules of ApplyOps hold: ops of this
// origin are never taken from a peer, a removed origin's ops past its cut are dropped (with
// what they wrote, as CutOrigin does), a stamp beyond the clock bound refuses its chunk
// (memory.ErrClockAhead; the device then catches up by op replay, AbandonSnapshot), the
// clock observes every stamp stored, a record whose tombstone is here (a forget that
// arrived meanwhile) never lands, and tombstones travel, so what was forgotten stays
// forgotten. The vector is written only at the end: until then this replica claims nothing
// of another origin, so it is never asked for those ops, and it serves no snapshot
// (ErrSnapshotIncomplete). The change feed gets every record stored, batch by batch.
func (r *Replica) InstallSnapshot(ctx context.Context, next func() (store.SnapshotChunk, error)) (store.SnapshotResult, error) {
	var res store.SnapshotResult
	c, err := next()
	if err != nil {
		return res, fmt.Errorf("install snapshot: %w", err)
	}
	if !c.Begin || !validSnapshotVV(c.VV) {
		return res, fmt.Errorf("install snapshot: no beginning: %w", store.ErrBadSnapshot)
	}
	var in install
	err = r.writeTx(ctx, func(tx *wtx) error {
		cur, active, err := readInstall(ctx, tx)
		if err != nil {
			return err
		}
		if !active {
			blank, err := isBlank(ctx, tx, r.cfg.Origin)
			if err != nil {
				return err
			}
			if !blank {
				return fmt.Errorf("install snapshot: %w", store.ErrNotBlank)
			}
			cur = install{VV: maps.Clone(c.VV)}
		} else {
			for o, s := range cur.VV {
				cur.VV[o] = min(s, c.VV[o])
			}
			for o := range c.VV {
				if _, ok := cur.VV[o]; !ok {
					cur.VV[o] = 0 // an origin the first snapshot did not have: none of its ops is sure
				}
			}
		}
		cur.Cur, cur.Total = c.VV, max(c.Total, cur.Rows)
		in = cur
		return writeInstall(ctx, tx, in)
	})
	if err != nil {
		return res, err
	}
	// Chunks of one table are gathered into a batch and installed in one transaction: FTS5
	// flushes a segment at every commit and merges them as they pile up, and every commit
	// writes the indexes' pages it touched to the WAL again, so fewer, larger transactions
	// cost less per row (docs/BENCH.md, "A second device joins").
	var batch [][]any
	var batchTable snapshotTable
	batchBytes := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		next, chunk, err := r.installBatch(ctx, batchTable, batch, in)
		batch, batchBytes = nil, 0
		if err != nil {
			return err
		}
		in = next
		res.Ops += chunk.Ops
		res.Records += chunk.Records
		return nil
	}
	for {
		c, err := next()
		if err != nil {
			// A cut: what arrived is kept, so the next install resumes after it.
			if ferr := flush(); ferr != nil {
				return res, ferr
			}
			return res, fmt.Errorf("install snapshot: %w", err)
		}
		if c.Begin {
			return res, fmt.Errorf("install snapshot: a second beginning: %w", store.ErrBadSnapshot)
		}
		if c.Table == "" {
			if !maps.Equal(c.VV, in.Cur) {
				return res, fmt.Errorf("install snapshot: the end's vector is not the beginning's: %w", store.ErrBadSnapshot)
			}
			if err := flush(); err != nil {
				return res, err
			}
			cut, err := r.endInstall(ctx, in.VV)
			res.Cut += cut
			res.Ops -= cut
			return res, err
		}
		i := slices.IndexFunc(snapshotTables, func(t snapshotTable) bool { return t.name == c.Table })
		if i < 0 || !slices.Equal(snapshotTables[i].cols, c.Columns) || len(c.Rows) == 0 {
			return res, fmt.Errorf("install snapshot: table %q %v: %w", c.Table, c.Columns, store.ErrBadSnapshot)
		}
		last := in.From.Table
		if len(batch) > 0 {
			last = batchTable.name
		}
		if at := slices.IndexFunc(snapshotTables, func(t snapshotTable) bool { return t.name == last }); i < at {
			return res, fmt.Errorf("install snapshot: %s after %s: %w", c.Table, last, store.ErrBadSnapshot)
		}
		size := rowsBytes(c.Rows)
		if len(batch) > 0 && (batchTable.name != c.Table || len(batch)+len(c.Rows) > installBatchRows || batchBytes+size > installBatchBytes) {
			if err := flush(); err != nil {
				return res, err
			}
		}
		batchTable = snapshotTables[i]
		batch = append(batch, c.Rows...)
		batchBytes += size
	}
}

// installBatchRows and installBatchBytes bound the rows one install transaction takes (the
// batch closes before the chunk that would pass either; a chunk alone may): about four of
// the sender's 2 MiB chunks of records. The dirty pages of a batch must fit the writer's
// page cache (64 MiB): 25,000 rows a transaction cost more CPU per row than 10,000 at 100k.
const (
	installBatchRows  = 10_000
	installBatchBytes = 16 << 20
)

// rowsBytes is about what rows hold: the length of their strings and blobs.
func rowsBytes(rows [][]any) int {
	n := 0
	for _, row := range rows {
		for _, v := range row {
			switch x := v.(type) {
			case string:
				n += len(x)
			case []byte:
				n += len(x)
			}
			n += 2
		}
	}
	return n
}

// installBatch installs rows of t in one transaction with where the install stands after
// them (in moved past their last row) and returns that and what it stored.
func (r *Replica) installBatch(ctx context.Context, t snapshotTable, rows [][]any, in install) (install, store.SnapshotResult, error) {
	var chunk store.SnapshotResult
	var maxHLC uint64
	purged := false
	next := in
	mode := modeInstall
	if t.name == "tombstones" {
		mode = modeForget // a tombstone may purge what arrived by op replay meanwhile
	}
	err := r.writeTxMode(ctx, mode, func(tx *wtx) error {
		chunk, maxHLC, purged = store.SnapshotResult{}, 0, false
		tx.change.Origin = feed.Device
		if err := tx.deferIndexing(ctx); err != nil {
			return err
		}
		// Without a tombstone here no row can be a forgotten one's: the rows skip the
		// lookups (a query per row, each of which database/sql watches with a goroutine
		// of its own inside a transaction — a third of the install's CPU at 100k).
		// Tombstones arrive after the record tables, so a fresh install checks none.
		var tombs bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM tombstones)").Scan(&tombs); err != nil {
			return fmt.Errorf("install snapshot: %w", err)
		}
		for _, row := range rows {
			if len(row) != len(t.cols) {
				return fmt.Errorf("install snapshot: %s row of %d values: %w", t.name, len(row), store.ErrBadSnapshot)
			}
			if t.hlcCol >= 0 {
				h, ok := row[t.hlcCol].(int64)
				if !ok || h < 0 {
					return fmt.Errorf("install snapshot: %s stamp %v: %w", t.name, row[t.hlcCol], store.ErrBadSnapshot)
				}
				if err := r.checkStamp("snapshot "+t.name+" row", uint64(h)); err != nil {
					return fmt.Errorf("install snapshot: %w", err)
				}
				maxHLC = max(maxHLC, uint64(h))
			}
			stored, err := r.installRow(ctx, tx, t, row, in, tombs)
			if err != nil {
				return fmt.Errorf("install snapshot %s: %w", t.name, err)
			}
			if stored && t.name == "tombstones" {
				p, err := purgeForgotten(ctx, tx, row)
				if err != nil {
					return fmt.Errorf("install snapshot %s: %w", t.name, err)
				}
				purged = purged || p
			}
			switch {
			case !stored:
			case t.name == "ops":
				chunk.Ops++
			default:
				chunk.Records++
			}
		}
		next.From = t.cursor(rows[len(rows)-1])
		next.Rows += int64(len(rows))
		next.Total = max(next.Total, next.Rows)
		return writeInstall(ctx, tx, next)
	})
	if err != nil {
		return in, chunk, err
	}
	r.clock.Observe(maxHLC)
	if purged {
		if err := r.purgeWAL(ctx); err != nil {
			return next, chunk, fmt.Errorf("install snapshot: %w", err)
		}
	}
	return next, chunk, nil
}

// validSnapshotVV reports whether a snapshot's vector could be a replica's.
func validSnapshotVV(vv store.VersionVector) bool {
	for o, s := range vv {
		if o == "" || s > 1<<62 {
			return false
		}
	}
	return true
}

// installRow stores one row of t; it reports false for a row it leaves out: an op of this
// origin (this replica is the only source of those), an op past the install's vector (its
// record may have come from a snapshot that did not have it: op replay brings it), a row
// already here (an op of another origin pulled while the install was cut), or a record
// forgotten here meanwhile. An op of a forgotten record lands without its payload, as
// forgetTx leaves it. tombs says whether any tombstone is here: without one, no record is
// forgotten, and an observation op whose payload lives in a row that is not here (left out
// for its tombstone, opForgotten) is told by the insert itself.
func (r *Replica) installRow(ctx context.Context, tx *wtx, t snapshotTable, row []any, in install, tombs bool) (bool, error) {
	insert := t.insert
	switch t.name {
	case "ops":
		origin, ok1 := row[0].(string)
		seq, ok2 := row[1].(int64)
		kind, ok3 := row[3].(string)
		if !ok1 || !ok2 || !ok3 || origin == "" || seq <= 0 || kind == store.OpCompacted {
			return false, fmt.Errorf("op %v/%v: %w", row[0], row[1], store.ErrBadSnapshot)
		}
		if p, isBytes := row[5].([]byte); row[5] != nil && (!isBytes || len(p) > maxSnapshotPayload) {
			return false, fmt.Errorf("op %s/%d payload: %w", origin, seq, store.ErrBadSnapshot)
		}
		if uint64(seq) > in.Cur[origin] {
			return false, fmt.Errorf("op %s/%d beyond the vector's %d: %w", origin, seq, in.Cur[origin], store.ErrBadSnapshot)
		}
		if origin == r.cfg.Origin || uint64(seq) > in.VV[origin] {
			return false, nil
		}
		id, err := tx.originID(ctx, origin)
		if err != nil {
			return false, err
		}
		row = slices.Clone(row)
		row[0] = id // the insert's ?1 is the origin's number (opForgotten reads the others)
		if !tombs {
			insert = opInsertUnlessRowGone
			break
		}
		if kind != store.OpForget {
			dead, err := r.opForgotten(ctx, tx, row)
			if err != nil {
				return false, err
			}
			if dead {
				row[5], row[6] = nil, int64(0) // row is a copy (above)
			}
		}
	case "devices":
		if id, ok := row[0].(string); ok {
			tx.record(store.OpDevice, id)
		}
	default:
		id, _ := row[0].(string)
		sess := ""
		if t.sessCol >= 0 {
			sess, _ = row[t.sessCol].(string)
		}
		if t.kind != "" {
			if tombs {
				if dead, err := isTombstoned(ctx, tx, id, sess); err != nil || dead {
					return false, err
				}
			}
			tx.record(t.kind, id)
		}
	}
	if hc := slices.Index(t.cols, "content_hash"); hc >= 0 {
		if h, ok := row[hc].(string); ok {
			row = slices.Clone(row)
			row[hc] = hashValue(h) // stored as bytes (contenthash.go)
		}
	}
	res, err := tx.ExecContext(ctx, insert, row...)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if t.name == "observations" {
		rowid, err := res.LastInsertId()
		if err != nil {
			return false, err
		}
		read, _ := row[9].(string)
		modified, _ := row[10].(string)
		if err := indexObservationFiles(ctx, tx, rowid, parseList(modified), parseList(read)); err != nil {
			return false, err
		}
	}
	return true, nil
}

// opInsertUnlessRowGone is the op-log's insert when no tombstone is here: an op whose
// payload lives in its record's row (inrow) lands without it when that row is not here,
// as opForgotten's rule has it, decided inside the statement.
const opInsertUnlessRowGone = `INSERT OR IGNORE INTO ops(origin_id, seq, hlc, kind, record_id, payload, inrow)
	SELECT ?1, ?2, ?3, ?4, ?5, CASE WHEN here THEN ?6 END, CASE WHEN here THEN ?7 ELSE 0 END
	FROM (SELECT ?7 = 0 OR ` + rowHeldSQL + ` AS here)`

// opForgotten reports whether an op row's record was forgotten here: its record (or the
// session its payload names) has a tombstone, or its payload lives in a record row that is
// not here (left out for its tombstone).
func (r *Replica) opForgotten(ctx context.Context, tx *wtx, row []any) (bool, error) {
	kind, _ := row[3].(string)
	id, _ := row[4].(string)
	payload, _ := row[5].([]byte)
	if inrow, _ := row[6].(int64); inrow != 0 {
		table := rowTable(kind)
		if table == "" {
			return false, fmt.Errorf("%w: a %s op kept in the row", store.ErrBadSnapshot, kind)
		}
		var one int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM "+table+" WHERE id = ?", id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return true, nil
		}
		return false, err
	}
	var peek struct {
		SessionID string `json:"session_id"`
	}
	if kind != store.OpSession && payload != nil {
		_ = json.Unmarshal(payload, &peek) // best effort, as applyOne
	}
	return isTombstoned(ctx, tx, id, peek.SessionID)
}

// purgeForgotten applies a tombstone the snapshot brought to what is already here: records
// (or ops with content) of it that arrived by op replay while the install was cut, before
// this device knew of the forget. It reports whether it deleted anything. A snapshot's own
// rows never need it: a snapshot holds no record its tombstones forget.
func purgeForgotten(ctx context.Context, tx *wtx, row []any) (bool, error) {
	id, _ := row[0].(string)
	hlc, _ := row[1].(int64)
	origin, _ := row[2].(string)
	var here bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)
		OR EXISTS (SELECT 1 FROM observations WHERE id = ?1 OR session_id = ?1)
		OR EXISTS (SELECT 1 FROM prompts WHERE id = ?1 OR session_id = ?1)
		OR EXISTS (SELECT 1 FROM summaries WHERE id = ?1 OR session_id = ?1)
		OR EXISTS (SELECT 1 FROM ops WHERE record_id = ?1 AND kind != 'forget' AND payload IS NOT NULL)`, id).Scan(&here); err != nil || !here {
		return false, err
	}
	return true, forgetTx(ctx, tx, id, uint64(hlc), origin)
}

// maxSnapshotPayload is the largest op payload a snapshot may carry: what one Ops message
// carries (sync's wire), so a snapshot never holds an op op replay could not deliver.
const maxSnapshotPayload = 7 << 20

// endInstall ends an install in one transaction: it writes the vector every snapshot of
// the install holds (every other origin's entry; this origin's is this replica's own,
// and an entry op replay already moved further stays), drops the ops past it (taken while
// a later snapshot's vector was the smallest: op replay brings them again, with their
// records), derives the supersede links and pins from the op-log, applies the receiver's
// removal cuts and forgets the install. It returns the ops the cuts dropped.
func (r *Replica) endInstall(ctx context.Context, vv store.VersionVector) (int, error) {
	cut := 0
	err := r.writeTx(ctx, func(tx *wtx) error {
		tx.change.Origin = feed.Device
		for o, s := range vv {
			if o == r.cfg.Origin {
				continue
			}
			if s > 0 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO version_vector(origin, seq) VALUES (?, ?)
					ON CONFLICT(origin) DO UPDATE SET seq = excluded.seq WHERE excluded.seq > version_vector.seq`, o, s); err != nil {
					return fmt.Errorf("install snapshot: %w", err)
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM ops WHERE origin_id = `+originIDOf+` AND seq > MAX(?2, COALESCE((SELECT seq FROM version_vector WHERE origin = ?1), 0))`, o, s); err != nil {
				return fmt.Errorf("install snapshot: %w", err)
			}
		}
		if err := relinkSupersedes(ctx, tx); err != nil {
			return fmt.Errorf("install snapshot: %w", err)
		}
		if err := repinFromOps(ctx, tx); err != nil {
			return fmt.Errorf("install snapshot: %w", err)
		}
		var err error
		cut, err = r.dropInstall(ctx, tx)
		return err
	})
	return cut, err
}

// AbandonSnapshot ends an install without its vector (a snapshot refused, or no device left
// that serves one): the rows stay — each is a state op replay reaches anyway, and applying
// an op twice changes nothing — the removal cuts apply, and op replay from the start brings
// the rest.
func (r *Replica) AbandonSnapshot(ctx context.Context) error {
	return r.writeTx(ctx, func(tx *wtx) error {
		tx.change.Origin = feed.Device
		if _, active, err := readInstall(ctx, tx); err != nil || !active {
			return err
		}
		_, err := r.dropInstall(ctx, tx)
		return err
	})
}

// dropInstall applies the removal cuts to every origin with an op past its cut (rows of
// several snapshots may hold ops the vector does not claim) and deletes the install's state.
func (r *Replica) dropInstall(ctx context.Context, tx *wtx) (int, error) {
	rows, err := tx.QueryContext(ctx, "SELECT c.origin FROM origin_cuts c JOIN origins g ON g.origin = c.origin WHERE EXISTS (SELECT 1 FROM ops WHERE origin_id = g.id AND seq > c.seq)")
	if err != nil {
		return 0, fmt.Errorf("install snapshot: %w", err)
	}
	var origins []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			rows.Close()
			return 0, fmt.Errorf("install snapshot: %w", err)
		}
		origins = append(origins, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("install snapshot: %w", err)
	}
	cut := 0
	for _, o := range origins {
		n, err := r.cutTx(ctx, tx, o)
		if err != nil {
			return 0, fmt.Errorf("install snapshot: %w", err)
		}
		cut += n
	}
	if _, err := tx.ExecContext(ctx, "DELETE FROM meta WHERE key = ?", installKey); err != nil {
		return 0, fmt.Errorf("install snapshot: %w", err)
	}
	return cut, nil
}

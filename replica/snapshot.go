package replica

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/memnode/memnode/store"
	"slices"
	"strings"

	"github.com/memnode/memnode/feed"
)

// A snapshot is the replicated part of this database at one version vector: the record rows
// (sessions, prompts, observations, summaries, devices, tombstones) and the op-log rows,
// placeholders (compacted seqs, which have no row) staying holes. A new device installs it
// by bulk insert in one transaction instead of replaying every op, and then holds exactly
// what the server held under that vector: it can serve every op to anyone, as the server
// can. Local state never goes: the queue, vectors, settings, group state, short IDs and
// file index (derived, rebuilt on install), a session's processing columns, and records of
// local-only projects (a record row travels only when an op of it is in the log, which is
// exactly when op replay would have created it). See DESIGN.md, "Snapshots".

// snapshotTable is one replicated table as a snapshot carries it. The column lists are the
// snapshot format: sender and receiver must agree on them exactly.
type snapshotTable struct {
	name   string
	cols   []string
	read   string // the rows that travel, in local arrival order
	insert string
	kind   string // change-feed kind of the table's records, "" for none
	hlcCol int    // index of the stamp column checked against the clock bound, -1 for none
}

var snapshotTables = []snapshotTable{
	{name: "sessions", kind: store.OpSession, hlcCol: 7,
		cols:   []string{"id", "project", "platform", "started_at", "ended_at", "status", "origin", "hlc"},
		read:   `SELECT id, project, platform, started_at, ended_at, status, origin, hlc FROM sessions s WHERE EXISTS (SELECT 1 FROM ops WHERE record_id = s.id AND kind = 'session') ORDER BY rowid`,
		insert: `INSERT INTO sessions(id, project, platform, started_at, ended_at, status, origin, hlc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
	{name: "prompts", kind: store.OpPrompt, hlcCol: 7,
		cols:   []string{"id", "session_id", "project", "prompt_number", "text", "created_at", "origin", "hlc"},
		read:   `SELECT id, session_id, project, prompt_number, text, created_at, origin, hlc FROM prompts p WHERE EXISTS (SELECT 1 FROM ops WHERE record_id = p.id) ORDER BY rowid`,
		insert: `INSERT INTO prompts(id, session_id, project, prompt_number, text, created_at, origin, hlc) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
	{name: "observations", kind: store.OpObservation, hlcCol: 18,
		cols:   strings.Fields(strings.ReplaceAll(obsColumns, ",", " ")),
		read:   `SELECT ` + obsColumns + ` FROM observations o WHERE EXISTS (SELECT 1 FROM ops WHERE record_id = o.id) ORDER BY rowid`,
		insert: `INSERT INTO observations(` + obsColumns + `) VALUES (` + placeholders(19) + `)`},
	{name: "summaries", kind: store.OpSummary, hlcCol: len(strings.Split(sumColumns, ",")) - 1,
		cols:   strings.Fields(strings.ReplaceAll(sumColumns, ",", " ")),
		read:   `SELECT ` + sumColumns + ` FROM summaries s WHERE EXISTS (SELECT 1 FROM ops WHERE record_id = s.id) ORDER BY rowid`,
		insert: `INSERT INTO summaries(` + sumColumns + `) VALUES (` + placeholders(len(strings.Split(sumColumns, ","))) + `)`},
	{name: "devices", kind: store.OpDevice, hlcCol: 2,
		cols: []string{"origin", "name", "hlc", "writer"},
		read: `SELECT origin, name, hlc, writer FROM devices d WHERE EXISTS (SELECT 1 FROM ops WHERE record_id = 'device:' || d.origin) ORDER BY origin`,
		// The receiver's own device row is the one register it may already hold: LWW.
		insert: `INSERT INTO devices(origin, name, hlc, writer) VALUES (?, ?, ?, ?)
			ON CONFLICT(origin) DO UPDATE SET name = excluded.name, hlc = excluded.hlc, writer = excluded.writer
			WHERE excluded.hlc > devices.hlc OR (excluded.hlc = devices.hlc AND excluded.writer > devices.writer)`},
	{name: "tombstones", hlcCol: 1,
		cols:   []string{"id", "hlc", "origin"},
		read:   `SELECT id, hlc, origin FROM tombstones t WHERE EXISTS (SELECT 1 FROM ops WHERE record_id = t.id AND kind = 'forget') ORDER BY id`,
		insert: `INSERT OR IGNORE INTO tombstones(id, hlc, origin) VALUES (?, ?, ?)`},
	{name: "ops", hlcCol: 2,
		cols:   []string{"origin", "seq", "hlc", "kind", "record_id", "payload", "inrow"},
		read:   `SELECT origin, seq, hlc, kind, record_id, payload, inrow FROM ops ORDER BY origin, seq`,
		insert: `INSERT INTO ops(origin, seq, hlc, kind, record_id, payload, inrow) VALUES (?, ?, ?, ?, ?, ?, ?)`},
}

// snapshotChunkRows bounds the rows of one chunk, whatever their size.
const snapshotChunkRows = 5000

// Snapshot reads the replicated state in one read transaction and hands it to emit in
// chunks of at most chunkBytes (or one larger row alone), table by table, then a last chunk with the version vector the
// rows belong to. emit's error ends the snapshot.
func (r *Replica) Snapshot(ctx context.Context, chunkBytes int, emit func(store.SnapshotChunk) error) error {
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
	for _, t := range snapshotTables {
		if err := snapshotRows(ctx, tx, t, chunkBytes, emit); err != nil {
			return err
		}
	}
	return emit(store.SnapshotChunk{VV: vv})
}

func snapshotRows(ctx context.Context, tx *sql.Tx, t snapshotTable, chunkBytes int, emit func(store.SnapshotChunk) error) error {
	rows, err := tx.QueryContext(ctx, t.read)
	if err != nil {
		return fmt.Errorf("snapshot %s: %w", t.name, err)
	}
	defer rows.Close()
	chunk := store.SnapshotChunk{Table: t.name, Columns: t.cols}
	size := 0
	for rows.Next() {
		vals := make([]any, len(t.cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("snapshot %s: %w", t.name, err)
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
		OR EXISTS (SELECT 1 FROM ops WHERE origin != ?1 OR kind != 'device')
		OR EXISTS (SELECT 1 FROM version_vector WHERE origin != ?1)`, self).Scan(&held)
	if err != nil {
		return false, fmt.Errorf("blank: %w", err)
	}
	return !held, nil
}

// InstallSnapshot installs a snapshot, read chunk by chunk with next, in one transaction:
// either all of it is stored with its vector, or (an error from next, a malformed chunk, a
// refused stamp, a crash) nothing is. The replica must be blank (ErrNotBlank). The rules of
// ApplyOps hold: ops of this origin are never taken from a peer, a removed origin's ops past
// its cut are dropped (with what they wrote, as CutOrigin does), a stamp beyond the clock
// bound refuses the whole snapshot (memory.ErrClockAhead; the device then catches up by op
// replay, which refuses only that origin), the clock observes the largest stamp, and
// tombstones travel, so what was forgotten stays forgotten. The change feed gets every record
// stored, so FTS (triggers), short IDs, embeddings and the viewer catch up.
func (r *Replica) InstallSnapshot(ctx context.Context, next func() (store.SnapshotChunk, error)) (store.SnapshotResult, error) {
	var res store.SnapshotResult
	var maxHLC uint64
	err := r.writeTx(ctx, func(tx *wtx) error {
		res, maxHLC = store.SnapshotResult{}, 0
		tx.change.Origin = feed.Device
		blank, err := isBlank(ctx, tx, r.cfg.Origin)
		if err != nil {
			return err
		}
		if !blank {
			return fmt.Errorf("install snapshot: %w", store.ErrNotBlank)
		}
		top := map[string]uint64{} // highest op seq per origin, checked against the vector
		for {
			c, err := next()
			if err != nil {
				return fmt.Errorf("install snapshot: %w", err)
			}
			if c.Table == "" {
				return r.finishSnapshot(ctx, tx, c.VV, top, &res)
			}
			i := slices.IndexFunc(snapshotTables, func(t snapshotTable) bool { return t.name == c.Table })
			if i < 0 || !slices.Equal(snapshotTables[i].cols, c.Columns) {
				return fmt.Errorf("install snapshot: table %q %v: %w", c.Table, c.Columns, store.ErrBadSnapshot)
			}
			t := snapshotTables[i]
			for _, row := range c.Rows {
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
				stored, err := r.installRow(ctx, tx, t, row, top)
				if err != nil {
					return fmt.Errorf("install snapshot %s: %w", t.name, err)
				}
				if !stored {
					continue
				}
				if t.name == "ops" {
					res.Ops++
				} else {
					res.Records++
				}
			}
		}
	})
	if err != nil {
		return store.SnapshotResult{}, err
	}
	r.clock.Observe(maxHLC)
	return res, nil
}

// installRow stores one row of t; it reports false for a row it leaves out (an op of this
// origin: this replica is the only source of those).
func (r *Replica) installRow(ctx context.Context, tx *wtx, t snapshotTable, row []any, top map[string]uint64) (bool, error) {
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
		if origin == r.cfg.Origin {
			return false, nil
		}
		top[origin] = max(top[origin], uint64(seq))
	case "devices":
		if id, ok := row[0].(string); ok {
			tx.record(store.OpDevice, id)
		}
	default:
		if id, ok := row[0].(string); ok && t.kind != "" {
			tx.record(t.kind, id)
		}
	}
	res, err := tx.ExecContext(ctx, t.insert, row...)
	if err != nil {
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

// maxSnapshotPayload is the largest op payload a snapshot may carry: what one Ops message
// carries (sync's wire), so a snapshot never holds an op op replay could not deliver.
const maxSnapshotPayload = 7 << 20

// finishSnapshot writes the snapshot's vector (every other origin's entry; this origin's is
// this replica's own) after checking that the op rows lie within it, then applies the
// receiver's removal cuts.
func (r *Replica) finishSnapshot(ctx context.Context, tx *wtx, vv store.VersionVector, top map[string]uint64, res *store.SnapshotResult) error {
	for o, s := range top {
		if s > vv[o] {
			return fmt.Errorf("install snapshot: op %s/%d beyond the vector's %d: %w", o, s, vv[o], store.ErrBadSnapshot)
		}
	}
	for o, s := range vv {
		if o == r.cfg.Origin || o == "" || s == 0 {
			continue
		}
		if s > 1<<62 {
			return fmt.Errorf("install snapshot: vector %s/%d: %w", o, s, store.ErrBadSnapshot)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO version_vector(origin, seq) VALUES (?, ?)", o, s); err != nil {
			return fmt.Errorf("install snapshot: %w", err)
		}
	}
	if err := relinkSupersedes(ctx, tx); err != nil {
		return fmt.Errorf("install snapshot: %w", err)
	}
	if err := repinFromOps(ctx, tx); err != nil {
		return fmt.Errorf("install snapshot: %w", err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT c.origin FROM origin_cuts c JOIN version_vector v ON v.origin = c.origin WHERE v.seq > c.seq")
	if err != nil {
		return fmt.Errorf("install snapshot: %w", err)
	}
	var cut []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			rows.Close()
			return fmt.Errorf("install snapshot: %w", err)
		}
		cut = append(cut, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("install snapshot: %w", err)
	}
	for _, o := range cut {
		n, err := r.cutTx(ctx, tx, o)
		if err != nil {
			return fmt.Errorf("install snapshot: %w", err)
		}
		res.Cut += n
		res.Ops -= n
	}
	return nil
}

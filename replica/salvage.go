package replica

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/memnode/memnode/internal/sqliteuri"
	"github.com/memnode/memnode/store"
	"net/url"

	"github.com/memnode/memnode/memory"
)

// Salvage bounds.
const (
	salvageBatch = 500 // rows read per query, and imported per transaction
	// salvageMaxJumps bounds how often one table's scan jumps over a range it cannot read
	// (each jump doubles: 2^40 rowids cover any table).
	salvageMaxJumps = 40
)

// SalvageResult counts what Salvage copied and how many unreadable ranges it skipped.
type SalvageResult struct {
	store.ImportResult
	Skipped int `json:"unreadable_ranges"`
}

// Salvage copies every record it can still read from the damaged database file at src
// into r: sessions, prompts, observations, summaries and device names, table by table in
// rowid order. Where a page cannot be read it jumps ahead (1, 2, 4 … rowids) until rows
// read again, so one bad page costs the rows on it and a few after, not the table. src is
// opened read-only and immutable: it is never written.
func (r *Replica) Salvage(ctx context.Context, src string) (SalvageResult, error) {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Set("immutable", "1")
	db, err := sql.Open("sqlite3", sqliteuri.File(src, q))
	if err != nil {
		return SalvageResult{}, fmt.Errorf("salvage: %w", err)
	}
	defer db.Close()
	var res SalvageResult
	tables := []struct {
		name, cols string
		add        func(b *store.ImportBatch, rows scanner) error
	}{
		{"sessions", "id, project, platform, started_at, COALESCE(ended_at, 0), status, origin, hlc", func(b *store.ImportBatch, rows scanner) error {
			var s memory.Session
			var hlc int64
			if err := rows.Scan(&s.ID, &s.Project, &s.Platform, &s.StartedAt, &s.EndedAt, &s.Status, &s.Origin, &hlc); err != nil {
				return err
			}
			s.HLC = uint64(hlc)
			b.Sessions = append(b.Sessions, s)
			return nil
		}},
		{"prompts", promptColumns, func(b *store.ImportBatch, rows scanner) error {
			p, err := scanPrompt(rows)
			if err == nil {
				b.Prompts = append(b.Prompts, p)
			}
			return err
		}},
		{"observations", obsColumns, func(b *store.ImportBatch, rows scanner) error {
			o, err := scanObservation(rows)
			if err == nil {
				b.Observations = append(b.Observations, o)
			}
			return err
		}},
		{"summaries", sumColumns, func(b *store.ImportBatch, rows scanner) error {
			s, err := scanSummary(rows)
			if err == nil {
				b.Summaries = append(b.Summaries, s)
			}
			return err
		}},
	}
	// Device names (a small table without rowids) in one pass: what reads is kept.
	var devs store.ImportBatch
	if rows, err := db.QueryContext(ctx, "SELECT origin, name FROM devices"); err == nil {
		for rows.Next() {
			var d memory.Device
			if rows.Scan(&d.Origin, &d.Name) == nil {
				devs.Devices = append(devs.Devices, d)
			}
		}
		if rows.Err() != nil {
			res.Skipped++
		}
		rows.Close()
	} else {
		res.Skipped++
	}
	if len(devs.Devices) > 0 {
		got, err := r.Import(ctx, &devs)
		if err != nil {
			return res, fmt.Errorf("salvage devices: %w", err)
		}
		res.Devices = got.Devices
	}
	for _, t := range tables {
		last, jump, jumps := int64(0), int64(1), 0
		for jumps <= salvageMaxJumps {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			b := &store.ImportBatch{}
			n, next, err := salvageRows(ctx, db, t.name, t.cols, last, func(rows scanner) error { return t.add(b, rows) })
			if n > 0 {
				got, ierr := r.Import(ctx, b)
				if ierr != nil {
					return res, fmt.Errorf("salvage %s: %w", t.name, ierr)
				}
				res.Devices += got.Devices
				res.Sessions += got.Sessions
				res.Prompts += got.Prompts
				res.Observations += got.Observations
				res.Summaries += got.Summaries
				res.ImportResult.Skipped += got.Skipped
				last, jump = next, 1
			}
			switch {
			case err != nil && !IsCorrupt(err):
				return res, fmt.Errorf("salvage %s: %w", t.name, err)
			case err != nil:
				res.Skipped++
				jumps++
				last += jump
				jump *= 2
			case n < salvageBatch:
				jumps = salvageMaxJumps + 1 // the table's end
			}
		}
	}
	return res, nil
}

// salvageRows reads up to salvageBatch rows of table after rowid, handing each fully
// scanned row to add. It returns how many it handed over and the last good rowid; an error
// means it stopped at a range it could not read.
func salvageRows(ctx context.Context, db *sql.DB, table, cols string, after int64, add func(scanner) error) (int, int64, error) {
	rows, err := db.QueryContext(ctx, fmt.Sprintf("SELECT rowid, %s FROM %s WHERE rowid > ? ORDER BY rowid LIMIT %d", cols, table, salvageBatch), after)
	if err != nil {
		return 0, after, err
	}
	defer rows.Close()
	n, last := 0, after
	for rows.Next() {
		var rowid int64
		if err := add(withRowID{rows, &rowid}); err != nil {
			return n, last, err
		}
		n, last = n+1, rowid
	}
	return n, last, rows.Err()
}

type scanner interface{ Scan(dest ...any) error }

// withRowID scans a row selected as "rowid, cols…": the rowid, then the record's columns.
type withRowID struct {
	rows  *sql.Rows
	rowid *int64
}

func (w withRowID) Scan(dest ...any) error { return w.rows.Scan(append([]any{w.rowid}, dest...)...) }

package replica

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/memnode/memnode/store"

	"github.com/memnode/memnode/feed"
)

// Import stores records with their given IDs, origins and stamps in one transaction and
// appends one op per stored record. A record whose ID is already known or tombstoned is
// skipped; sessions merge by their LWW rule.
func (r *Replica) Import(ctx context.Context, b *store.ImportBatch) (store.ImportResult, error) {
	if err := r.boundImport(b); err != nil {
		return store.ImportResult{}, fmt.Errorf("import: %w", err)
	}
	var res store.ImportResult
	forgets := 0
	mode := modeImport
	if len(b.Tombstones) > 0 {
		mode = modeForget // forgotten content is overwritten, as by Forget and ApplyOps
	}
	err := r.writeTxMode(ctx, mode, func(tx *wtx) error {
		res, forgets = store.ImportResult{}, 0
		tx.change.Origin = feed.Import
		if err := tx.deferIndexing(ctx); err != nil {
			return err
		}
		ow := tx.ops()
		// The batch's tombstones are applied after its records, so one read before them
		// answers every record's check (its own ID and its session's).
		dead, err := tombstonedAmong(ctx, tx, importedIDs(b))
		if err != nil {
			return err
		}
		stamp := func(origin *string, hlc *uint64) {
			if *origin == "" {
				*origin = r.cfg.Origin
			}
			if *hlc == 0 {
				*hlc = r.clock.Now()
			} else {
				r.clock.Observe(*hlc)
			}
		}
		for _, d := range b.Devices {
			if d.Origin == "" {
				res.Skipped++
				continue
			}
			var name string
			err := tx.QueryRowContext(ctx, "SELECT name FROM devices WHERE origin = ?", d.Origin).Scan(&name)
			if err == nil && name == d.Name {
				res.Skipped++
				continue
			}
			if err != nil && err != sql.ErrNoRows {
				return fmt.Errorf("import device: %w", err)
			}
			hlc := r.clock.Now()
			if err := upsertDevice(ctx, tx, d, hlc, r.cfg.Origin); err != nil {
				return err
			}
			if err := ow.append(ctx, store.OpDevice, "device:"+d.Origin, "", hlc, encodeDevice(d)); err != nil {
				return err
			}
			tx.record(store.OpDevice, d.Origin)
			res.Devices++
		}
		for _, s := range b.Sessions {
			if s.ID == "" {
				res.Skipped++
				continue
			}
			if dead[s.ID] {
				res.Skipped++
				continue
			}
			stamp(&s.Origin, &s.HLC)
			if s.Status == "" {
				s.Status = "active"
			}
			var cur sql.NullInt64
			if err := tx.QueryRowContext(ctx, "SELECT hlc FROM sessions WHERE id = ?", s.ID).Scan(&cur); err != nil && err != sql.ErrNoRows {
				return fmt.Errorf("import session: %w", err)
			}
			if cur.Valid && uint64(cur.Int64) >= s.HLC {
				res.Skipped++
				continue
			}
			if err := upsertSession(ctx, tx, s); err != nil {
				return err
			}
			if err := ow.append(ctx, store.OpSession, s.ID, s.Project, r.clock.Now(), encodeSession(s)); err != nil {
				return err
			}
			tx.record(store.OpSession, s.ID)
			res.Sessions++
		}
		for _, p := range b.Prompts {
			if p.ID == "" {
				res.Skipped++
				continue
			}
			if dead[p.ID] || dead[p.SessionID] {
				res.Skipped++
				continue
			}
			stamp(&p.Origin, &p.HLC)
			ok, err := storePrompt(ctx, tx, p)
			if err != nil {
				return err
			}
			if !ok {
				res.Skipped++
				continue
			}
			if err := ow.appendStored(ctx, store.OpPrompt, p.ID, p.Project, r.clock.Now(), encodePrompt(p)); err != nil {
				return err
			}
			tx.record(store.OpPrompt, p.ID)
			res.Prompts++
		}
		for i := range b.Observations {
			o := b.Observations[i]
			if o.ID == "" {
				res.Skipped++
				continue
			}
			if dead[o.ID] || dead[o.SessionID] {
				res.Skipped++
				continue
			}
			stamp(&o.Origin, &o.HLC)
			ok, err := storeObservation(ctx, tx, &o)
			if err != nil {
				return err
			}
			if !ok {
				res.Skipped++
				continue
			}
			if err := ow.appendObservation(ctx, o, r.clock.Now(), encodeObservation(o)); err != nil {
				return err
			}
			tx.record(store.OpObservation, o.ID)
			res.Observations++
		}
		for _, s := range b.Summaries {
			if s.ID == "" {
				res.Skipped++
				continue
			}
			if dead[s.ID] || dead[s.SessionID] {
				res.Skipped++
				continue
			}
			stamp(&s.Origin, &s.HLC)
			ok, err := storeSummary(ctx, tx, s)
			if err != nil {
				return err
			}
			if !ok {
				res.Skipped++
				continue
			}
			if err := ow.appendStored(ctx, store.OpSummary, s.ID, s.Project, r.clock.Now(), encodeSummary(s)); err != nil {
				return err
			}
			tx.record(store.OpSummary, s.ID)
			res.Summaries++
		}
		for _, id := range b.Tombstones {
			if id == "" {
				res.Skipped++
				continue
			}
			if dead, err := isTombstoned(ctx, tx, id); err != nil {
				return err
			} else if dead {
				res.Skipped++
				continue
			}
			if err := r.forgetHere(ctx, tx, id); err != nil {
				return err
			}
			res.Tombstones++
			forgets++
		}
		for _, s := range b.Supersedes {
			ok, err := r.importSupersede(ctx, tx, s)
			if err != nil {
				return err
			}
			if !ok {
				res.Skipped++
				continue
			}
			res.Supersedes++
		}
		return putClaudeMemIDs(ctx, tx, b.ClaudeMemIDs)
	})
	if err != nil {
		return store.ImportResult{}, fmt.Errorf("import: %w", err)
	}
	if forgets > 0 {
		return res, r.purgeWAL(ctx)
	}
	return res, nil
}

// importedIDs are the IDs whose tombstones decide whether b's records are stored: each
// record's own and its session's.
func importedIDs(b *store.ImportBatch) []string {
	ids := make([]string, 0, len(b.Sessions)+2*(len(b.Prompts)+len(b.Observations)+len(b.Summaries)))
	for _, s := range b.Sessions {
		ids = append(ids, s.ID)
	}
	for _, p := range b.Prompts {
		ids = append(ids, p.ID, p.SessionID)
	}
	for _, o := range b.Observations {
		ids = append(ids, o.ID, o.SessionID)
	}
	for _, s := range b.Summaries {
		ids = append(ids, s.ID, s.SessionID)
	}
	return ids
}

// boundImport refuses the batch if a record is stamped too far ahead of this clock (one
// such stamp would drag every device's clock there) and clamps created_at times from the
// future to now.
func (r *Replica) boundImport(b *store.ImportBatch) error {
	for _, s := range b.Sessions {
		if err := r.checkStamp("session "+s.ID, s.HLC); err != nil {
			return err
		}
	}
	for i := range b.Prompts {
		if err := r.checkStamp("prompt "+b.Prompts[i].ID, b.Prompts[i].HLC); err != nil {
			return err
		}
		r.clampCreated(&b.Prompts[i].CreatedAt)
	}
	for i := range b.Observations {
		if err := r.checkStamp("observation "+b.Observations[i].ID, b.Observations[i].HLC); err != nil {
			return err
		}
		r.clampCreated(&b.Observations[i].CreatedAt)
	}
	for i := range b.Summaries {
		if err := r.checkStamp("summary "+b.Summaries[i].ID, b.Summaries[i].HLC); err != nil {
			return err
		}
		r.clampCreated(&b.Summaries[i].CreatedAt)
	}
	return nil
}

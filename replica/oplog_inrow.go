package replica

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"unicode/utf8"

	"github.com/memnode/memnode/memory"
)

// Observation, prompt and summary ops keep their payload in the record row (migration 7
// for observations, schema 18 for prompts and summaries; DESIGN.md "Op payloads in the
// row"). None of them changes once stored, so the op row keeps (origin, seq, hlc, kind,
// record_id) and inrow = 1, and OpsSince rebuilds the payload from the row. Team backends sign what OpsSince returns and payloads are relayed as the bytes
// they arrived with, so the rebuild must be byte-exact: an op keeps its payload in the row
// only when the rebuild of what the row will give back equals the payload it carries;
// otherwise (a payload from a newer device with fields this build does not know, another
// key order, an omitted origin) the bytes are stored as before.

// rowPayload is the payload OpsSince rebuilds from o's row: the list columns are stored as
// JSON (jsonList) and read back with parseList, so they are rebuilt as that round trip gives
// them.
func rowPayload(o memory.Observation) []byte {
	o.Facts, o.Concepts = parseList(jsonList(o.Facts)), parseList(jsonList(o.Concepts))
	o.FilesRead, o.FilesModified = parseList(jsonList(o.FilesRead)), parseList(jsonList(o.FilesModified))
	return encodeObservation(o)
}

// appendObservation appends the op of observation o, which this transaction has just
// stored as a new row: without its payload when the row rebuilds it exactly. payload is
// encodeObservation(o), so the row rebuilds it exactly when o's lists survive their
// columns' round trip (listsSurviveRow) — the same answer as comparing rowPayload(o) with
// it (FuzzListsSurviveRow), without encoding the observation a second time.
func (w *opWriter) appendObservation(ctx context.Context, o memory.Observation, hlc uint64, payload []byte) error {
	return w.add(ctx, store.OpObservation, o.ID, o.Project, hlc, payload, listsSurviveRow(o))
}

// appendStored appends the op of a prompt or summary this transaction has just stored as a
// new row from the very values payload encodes: its columns hold those values as they are
// (text as its bytes, integers as integers), so the row rebuilds the payload byte for byte
// (TestPromptAndSummaryOpsRebuildFromTheRow) and the op goes without it.
func (w *opWriter) appendStored(ctx context.Context, kind, recordID, project string, hlc uint64, payload []byte) error {
	return w.add(ctx, kind, recordID, project, hlc, payload, true)
}

// listsSurviveRow reports whether o's lists come back from their columns (jsonList, then
// parseList) as they went in: JSON gives back every valid UTF-8 string unchanged and
// replaces the invalid bytes of any other.
func listsSurviveRow(o memory.Observation) bool {
	for _, l := range [...][]string{o.Facts, o.Concepts, o.FilesRead, o.FilesModified} {
		for _, s := range l {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	return true
}

// rowQuerier is what materialize reads with: the read transaction of OpsSince, the write
// transaction of a rewind, or a migration's.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// materialize gives an op kept in the row its payload back; nil when the row is gone (the
// record was forgotten, or the row is being rewound).
func materialize(ctx context.Context, q rowQuerier, op *store.Op) error {
	var payload []byte
	var err error
	switch op.Kind {
	case store.OpObservation:
		var o memory.Observation
		if o, err = scanObservation(q.QueryRowContext(ctx, "SELECT "+obsColumns+" FROM observations WHERE id = ?", op.RecordID)); err == nil {
			payload = encodeObservation(o)
		}
	case store.OpPrompt:
		var p memory.Prompt
		if p, err = scanPrompt(q.QueryRowContext(ctx, "SELECT "+promptColumns+" FROM prompts WHERE id = ?", op.RecordID)); err == nil {
			payload = encodePrompt(p)
		}
	case store.OpSummary:
		var s memory.Summary
		if s, err = scanSummary(q.QueryRowContext(ctx, "SELECT "+sumColumns+" FROM summaries WHERE id = ?", op.RecordID)); err == nil {
			payload = encodeSummary(s)
		}
	default:
		return fmt.Errorf("rebuild op payload %s: a %s op keeps its payload in the op-log", op.RecordID, op.Kind)
	}
	if errors.Is(err, sql.ErrNoRows) {
		op.Payload = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("rebuild op payload %s: %w", op.RecordID, err)
	}
	op.Payload = payload
	return nil
}

// rowTable is the table whose row holds the payload of an op of kind kept in the row ("" for
// a kind whose ops keep their payload in the op-log).
func rowTable(kind string) string {
	switch kind {
	case store.OpObservation:
		return "observations"
	case store.OpPrompt:
		return "prompts"
	case store.OpSummary:
		return "summaries"
	}
	return ""
}

// rowHeldSQL is true in SQL when the op of kind ?4 and record ?5 has its record's row here:
// what an op kept in the row needs to keep its payload.
const rowHeldSQL = `CASE ?4 WHEN 'observation' THEN EXISTS (SELECT 1 FROM observations WHERE id = ?5)
	WHEN 'prompt' THEN EXISTS (SELECT 1 FROM prompts WHERE id = ?5)
	WHEN 'summary' THEN EXISTS (SELECT 1 FROM summaries WHERE id = ?5) ELSE 0 END`

// opsInRow is migration 7's step: every observation op whose payload the row rebuilds
// byte for byte drops it.
func opsInRow(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, "SELECT origin, seq, record_id, payload FROM ops WHERE kind = 'observation' AND payload IS NOT NULL")
	if err != nil {
		return fmt.Errorf("ops in row: %w", err)
	}
	var ops []store.Op
	for rows.Next() {
		op := store.Op{Kind: store.OpObservation}
		if err := rows.Scan(&op.Origin, &op.Seq, &op.RecordID, &op.Payload); err != nil {
			rows.Close()
			return fmt.Errorf("ops in row: %w", err)
		}
		ops = append(ops, op)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("ops in row: %w", err)
	}
	for _, op := range ops {
		stored := op.Payload
		if err := materialize(ctx, tx, &op); err != nil {
			return err
		}
		if op.Payload == nil || !bytes.Equal(op.Payload, stored) {
			continue
		}
		if _, err := tx.ExecContext(ctx, "UPDATE ops SET payload = NULL, inrow = 1 WHERE origin = ? AND seq = ?", op.Origin, op.Seq); err != nil {
			return fmt.Errorf("ops in row: %w", err)
		}
	}
	return nil
}

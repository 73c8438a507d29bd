package replica

import (
	"context"
	"fmt"
)

// ftsTable is a record table with a full-text index its triggers keep (migrations 0013 and
// 0020): the index, and the view that gives a row's indexed columns.
type ftsTable struct {
	table, index, content, columns string
}

// ftsTables are the record tables whose indexing a transaction may defer.
var ftsTables = [...]ftsTable{
	{"observations", "observations_fts", "observations_fts_content", "title, subtitle, narrative, facts, concepts, files, parts, project_key"},
	{"prompts", "prompts_fts", "prompts_fts_content", "text, project_key"},
	{"summaries", "summaries_fts", "summaries_fts_content", "request, investigated, learned, completed, next_steps, notes, project_key"},
}

// deferIndexing makes the transaction index the records it stores in one statement per
// table at its end (indexDeferred, which runTx calls before committing) instead of row by
// row in their triggers. FTS5 writes its pending terms as a new segment at every savepoint,
// and SQLite opens one for every insert of a record or an op inside a transaction, so a
// batch indexed row by row writes a segment per record and then merges them (migration
// 0020). Batches of records call it first: Import, ApplyOps, a snapshot chunk, and a
// Commit of more than one record.
func (t *wtx) deferIndexing(ctx context.Context) error {
	if t.ftsDeferred {
		return nil
	}
	for _, f := range ftsTables {
		if _, err := t.ExecContext(ctx, "INSERT INTO fts_deferred(tbl, after) VALUES (?, coalesce((SELECT max(rowid) FROM "+f.table+"), 0))", f.table); err != nil {
			return fmt.Errorf("defer indexing: %w", err)
		}
	}
	t.ftsDeferred = true
	return nil
}

// indexDeferred indexes the rows stored since deferIndexing — every row above the rowid it
// noted, as the row stands now — and ends the deferral. A row stored and removed meanwhile
// was never indexed and is not; the triggers left its removal alone.
func (t *wtx) indexDeferred(ctx context.Context) error {
	if !t.ftsDeferred {
		return nil
	}
	for _, f := range ftsTables {
		q := "INSERT INTO " + f.index + "(rowid, " + f.columns + ") SELECT rowid, " + f.columns + " FROM " + f.content +
			" WHERE rowid > (SELECT after FROM fts_deferred WHERE tbl = '" + f.table + "')"
		if _, err := t.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("index %s: %w", f.table, err)
		}
	}
	if _, err := t.ExecContext(ctx, "DELETE FROM fts_deferred"); err != nil {
		return fmt.Errorf("index deferred: %w", err)
	}
	t.ftsDeferred = false
	return nil
}

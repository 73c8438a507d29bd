package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
)

// putClaudeMemIDs keeps the map of an import, also for records an earlier import stored.
func putClaudeMemIDs(ctx context.Context, tx *wtx, ids []store.ClaudeMemID) error {
	for _, m := range ids {
		if m.ID == "" || m.Num <= 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, "INSERT OR REPLACE INTO claude_mem_ids(kind, num, id) VALUES (?, ?, ?)", m.Kind, m.Num, m.ID); err != nil {
			return fmt.Errorf("keep claude-mem ids: %w", err)
		}
	}
	return nil
}

// ClaudeMemRecord returns the memnode ID of the record claude-mem numbered num among its
// records of kind (OpObservation, OpSummary or OpPrompt); ok is false when no import
// brought such a record.
func (r *Replica) ClaudeMemRecord(ctx context.Context, kind string, num int64) (id string, ok bool, err error) {
	err = r.reads.queryRow(ctx, "SELECT id FROM claude_mem_ids WHERE kind = ? AND num = ?", kind, num).Scan(&id)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("claude-mem id %d: %w", num, err)
	}
	return id, true, nil
}

package replica

import (
	"context"
	"fmt"
	"strings"
)

// CanonicalDump renders the replicated state (not local processing state, not the op-log)
// as deterministic text: two replicas have converged exactly when their dumps are equal.
func (r *Replica) CanonicalDump(ctx context.Context) (string, error) {
	var b strings.Builder
	queries := []struct{ name, q string }{
		{"session", "SELECT id, project, platform, started_at, COALESCE(ended_at, 0), status, origin, hlc FROM sessions ORDER BY id"},
		{"prompt", "SELECT id, session_id, project, prompt_number, text, created_at, origin, hlc FROM prompts ORDER BY id"},
		{"observation", "SELECT " + strings.Replace(obsColumns, "content_hash", hashTextSQL, 1) + " FROM observations ORDER BY id"},
		{"summary", "SELECT " + sumColumns + " FROM summaries ORDER BY id"},
		{"device", "SELECT origin, name, hlc, writer FROM devices ORDER BY origin"},
		{"tombstone", "SELECT id FROM tombstones ORDER BY id"},
		{"supersede", "SELECT old_id, new_id, session_id FROM supersedes ORDER BY old_id, new_id"},
		{"pin", "SELECT id, pinned, hlc, writer, session_id, project FROM pins ORDER BY id"},
		{"fts", "SELECT COUNT(*) FROM observations_fts"},
	}
	for _, q := range queries {
		rows, err := r.r.QueryContext(ctx, q.q)
		if err != nil {
			return "", fmt.Errorf("dump %s: %w", q.name, err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				rows.Close()
				return "", fmt.Errorf("dump %s: %w", q.name, err)
			}
			b.WriteString(q.name)
			for _, v := range vals {
				if bs, ok := v.([]byte); ok {
					v = string(bs)
				}
				fmt.Fprintf(&b, "\t%v", v)
			}
			b.WriteByte('\n')
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return "", fmt.Errorf("dump %s: %w", q.name, err)
		}
	}
	return b.String(), nil
}

// OpPayloadContains reports whether any op payload contains s (tests of forget use it).
func (r *Replica) OpPayloadContains(ctx context.Context, s string) (bool, error) {
	var n int
	err := r.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM ops WHERE instr(payload, ?) > 0", []byte(s)).Scan(&n)
	return n > 0, err
}

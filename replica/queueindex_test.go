package replica

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/memnode/memnode/store"
	"path/filepath"
	"strings"
	"testing"
)

// The privacy gate's LastQueuedPrompt is one seek in a partial index of prompt rows, so a
// queued tool call (nearly every row) costs no entry in it on insert nor on delete; a queue
// database made before keeps no full (session_id, kind, id) index.
func TestLastQueuedPromptUsesPartialPromptIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	// A queue database as an older node left it: the full index, which every row paid for.
	old, err := sql.Open("sqlite3", QueuePath(path))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(queueSchema); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`DROP INDEX pending_prompt; CREATE INDEX pending_session_kind ON pending(session_id, kind, id)`); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	for i, kind := range []string{"prompt", "observation", "prompt", "observation", "observation"} {
		if _, err := r.Enqueue(ctx, store.PendingEvent{EventID: fmt.Sprintf("ev-%d", i), Kind: kind, SessionID: "s1",
			Project: "p", Payload: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}

	var names []string
	rows, err := r.q.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'pending' AND sql IS NOT NULL ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names, ","); got != "pending_prompt,pending_session" {
		t.Fatalf("queue indexes = %s, want pending_prompt,pending_session", got)
	}
	// Partial: only prompt rows have an entry, so a tool call's insert and delete skip it.
	var partial int
	if err := r.q.QueryRowContext(ctx, `SELECT partial FROM pragma_index_list('pending') WHERE name = 'pending_prompt'`).Scan(&partial); err != nil {
		t.Fatal(err)
	}
	if partial != 1 {
		t.Fatal("pending_prompt is a full index: every queued tool call pays an entry in it")
	}

	if p := queryPlan(t, r.q, lastQueuedPromptQuery, "s1"); !strings.Contains(p, "USING INDEX pending_prompt") || strings.Contains(p, "TEMP B-TREE") {
		t.Fatalf("LastQueuedPrompt plan = %q, want one seek in pending_prompt", p)
	}

	ev, ok, err := r.LastQueuedPrompt(ctx, "s1")
	if err != nil || !ok || ev.EventID != "ev-2" {
		t.Fatalf("LastQueuedPrompt = %q, %v, %v; want the latest prompt ev-2", ev.EventID, ok, err)
	}
}

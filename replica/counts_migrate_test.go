package replica

import (
	"context"
	"path/filepath"
	"testing"
)

// TestCountsMigrationFillsExistingDatabases: a database written before schema v11 (no
// maintained counts, no triggers) gets its counts from the migration — equal to a fresh
// count — and they follow the writes after it.
func TestCountsMigrationFillsExistingDatabases(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	planFixtureInto(t, r)
	// Back to schema v10: as a database written before the counts.
	rows, err := r.w.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'counts_%'")
	if err != nil {
		t.Fatal(err)
	}
	var drops []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		drops = append(drops, "DROP TRIGGER "+name)
	}
	rows.Close()
	if len(drops) == 0 {
		t.Fatal("no counts trigger found to drop")
	}
	drops = append(drops, "DROP TABLE table_counts", "DROP TABLE project_counts", "DELETE FROM schema_version WHERE version >= 11")
	for _, q := range drops {
		if _, err := r.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()

	r, err = Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if diff, err := CountsDiff(ctx, r); err != nil || diff != "" {
		t.Fatalf("after the migration: %v\n%s", err, diff)
	}
	obs, tokens, err := r.ProjectStats(ctx, "proj-1")
	if err != nil || obs != 100 || tokens != 1000 {
		t.Fatalf("proj-1: %d observations, %d tokens, %v; want 100, 1000", obs, tokens, err)
	}
	if n, err := r.ProjectSessions(ctx, "proj-1"); err != nil || n != 2 {
		t.Fatalf("proj-1: %d sessions, %v; want 2", n, err)
	}
	c, err := r.Counts(ctx)
	if err != nil || c.Sessions != 7 || c.Observations != 300 || c.Summaries != 30 || c.Prompts != 30 {
		t.Fatalf("counts %+v, %v; want 7 sessions, 300 observations, 30 summaries, 30 prompts", c, err)
	}
	if _, err := r.Forget(ctx, []string{"s1"}); err != nil {
		t.Fatal(err)
	}
	if diff, err := CountsDiff(ctx, r); err != nil || diff != "" {
		t.Fatalf("after a forget: %v\n%s", err, diff)
	}
}

package replica

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/store"
)

// schemaV12FTS is the full-text layout before migration 0013 for summaries and prompts
// (0001's: content read straight from their tables, no project_key); observations get
// 0010's again by running its file.
const schemaV12FTS = `
DROP TRIGGER summaries_ai; DROP TRIGGER summaries_ad; DROP TABLE summaries_fts; DROP VIEW summaries_fts_content;
CREATE VIRTUAL TABLE summaries_fts USING fts5(request, investigated, learned, completed, next_steps, notes,
    content='summaries', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER summaries_ai AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes)
    VALUES (new.rowid, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
END;
CREATE TRIGGER summaries_ad AFTER DELETE ON summaries BEGIN
    INSERT INTO summaries_fts(summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes)
    VALUES ('delete', old.rowid, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
END;
INSERT INTO summaries_fts(summaries_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO summaries_fts(summaries_fts) VALUES ('rebuild');
DROP TRIGGER prompts_ai; DROP TRIGGER prompts_ad; DROP TABLE prompts_fts; DROP VIEW prompts_fts_content;
CREATE VIRTUAL TABLE prompts_fts USING fts5(text, content='prompts', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER prompts_ai AFTER INSERT ON prompts BEGIN
    INSERT INTO prompts_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER prompts_ad AFTER DELETE ON prompts BEGIN
    INSERT INTO prompts_fts(prompts_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
INSERT INTO prompts_fts(prompts_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO prompts_fts(prompts_fts) VALUES ('rebuild');
DELETE FROM schema_version WHERE version >= 13;`

// TestProjectKeyMigrationRebuildsTheIndexes: a database with schema v12's full-text layout
// gets project_key in all three indexes at its next open — every record indexed under its
// project's key, the indexes consistent with their content (FTS5 integrity-check), still
// secure-delete (migration 0012), and a
// project-filtered search answering the project's records — and writes after it keep them.
func TestProjectKeyMigrationRebuildsTheIndexes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	planFixtureInto(t, r)
	v10, err := migrationFiles.ReadFile("migrations/0010_code_parts.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{string(v10), schemaV12FTS} {
		if _, err := r.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	var cols int
	if err := r.w.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_table_info('observations_fts') WHERE name = 'project_key'").Scan(&cols); err != nil || cols != 0 {
		t.Fatalf("the v12 layout still has project_key (%d, %v)", cols, err)
	}
	r.Close()

	r, err = Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	check := func(when string, want map[string]int) {
		t.Helper()
		for _, fts := range []string{"observations_fts", "summaries_fts", "prompts_fts"} {
			if _, err := r.w.ExecContext(ctx, "INSERT INTO "+fts+"("+fts+", rank) VALUES ('integrity-check', 1)"); err != nil {
				t.Fatalf("%s: %s: %v", when, fts, err)
			}
			var secure string
			if err := r.r.QueryRowContext(ctx, "SELECT v FROM "+fts+"_config WHERE k = 'secure-delete'").Scan(&secure); err != nil || secure != "1" {
				t.Fatalf("%s: %s: secure-delete %q (%v): a forget would leave the words in old segments", when, fts, secure, err)
			}
			var n int
			if err := r.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+fts+" WHERE "+fts+` MATCH 'project_key : "`+projectKey("proj-1")+`"'`).Scan(&n); err != nil || n != want[fts] {
				t.Fatalf("%s: %s holds %d rows under proj-1's key (%v), want %d", when, fts, n, err, want[fts])
			}
		}
		hits, err := r.WindowTitles(ctx, store.OpObservation, store.WindowQuery{Match: "webhook", Filter: store.SearchFilter{Project: "proj-1"}, Window: 500, Limit: 500}, nil, 1)
		if err != nil || len(hits) != want["observations_fts"] {
			t.Fatalf("%s: project-filtered search: %d hits (%v), want %d", when, len(hits), err, want["observations_fts"])
		}
	}
	check("after the migration", map[string]int{"observations_fts": 100, "summaries_fts": 10, "prompts_fts": 10})
	// s1 holds record i when i%7 == 1, proj-1 when i%3 == 1: observations i%21 == 1 (15 of
	// them), summaries and prompts also i%10 == 0 (190 only).
	if _, err := r.Forget(ctx, []string{"s1"}); err != nil {
		t.Fatal(err)
	}
	check("after forgetting a session", map[string]int{"observations_fts": 100 - 15, "summaries_fts": 10 - 1, "prompts_fts": 10 - 1})
}

package replica

import (
	"context"
	"path/filepath"
	"testing"
)

// A database of schema v9 (no parts column) is migrated in place: the index is rebuilt
// with the parts of every stored record's names, and later inserts, updates and deletes
// keep it in step (FTS5's integrity-check compares the index with its content).
func TestMigrationIndexesCodePartsOfExistingRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v9.db")
	db := databaseAt(t, path, 9)
	if _, err := db.Exec(`INSERT INTO observations(rowid, id, session_id, project, type, title, narrative, files_read, files_modified, content_hash, created_at, origin, hlc)
		VALUES (7, 'OBS7', 's', 'p', 'change', 'Call OnUnload', 'read parse_timeout', '[]', '[]', 'h', 1, 'o', 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r, err := Open(ctx, Config{Path: path, Origin: "o"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	count := func(match string) int {
		t.Helper()
		var n int
		if err := r.ReadDB().QueryRow(`SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH ?`, match).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	check := func(when string) {
		t.Helper()
		if _, err := r.w.ExecContext(ctx, `INSERT INTO observations_fts(observations_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
			t.Fatalf("%s: the index disagrees with its content: %v", when, err)
		}
	}
	if count(`parts : "unload"`) != 1 || count(`parts : "parsetimeout"`) != 1 || count(`"onunload"`) != 1 {
		t.Fatalf("after the migration: unload %d, parsetimeout %d, onunload %d", count(`parts : "unload"`), count(`parts : "parsetimeout"`), count(`"onunload"`))
	}
	check("migration")
	if _, err := r.w.ExecContext(ctx, `UPDATE observations SET title = 'Call OnReload' WHERE id = 'OBS7'`); err != nil {
		t.Fatal(err)
	}
	if count(`parts : "unload"`) != 0 || count(`parts : "reload"`) != 1 {
		t.Fatalf("after an update: unload %d, reload %d", count(`parts : "unload"`), count(`parts : "reload"`))
	}
	check("update")
	if _, err := r.w.ExecContext(ctx, `DELETE FROM observations WHERE id = 'OBS7'`); err != nil {
		t.Fatal(err)
	}
	if count(`parts : "reload"`) != 0 {
		t.Fatal("a deleted record's parts are still indexed")
	}
	check("delete")
}

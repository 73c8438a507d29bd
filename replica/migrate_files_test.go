package replica

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// A database of schema v4 (file lists not in the search index, no basename column) is
// migrated in place: its index is rebuilt with the files column and every stored path gets
// its basename, so the records already there are found by file.
func TestMigrationIndexesFilesOfExistingRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v4.db")
	db := databaseAt(t, path, 4)
	if _, err := db.Exec(`INSERT INTO observations(rowid, id, session_id, project, type, title, narrative, files_read, files_modified, content_hash, created_at, origin, hlc)
		VALUES (7, 'OBS7', 's', 'p', 'change', 'Added leeway', 'JWT checks', '["internal/auth/jwt.go"]', '["internal/auth/middleware.go"]', 'h', 1, 'o', 1)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO observation_files(path, obs_rowid, modified) VALUES ('internal/auth/middleware.go', 7, 1), ('internal/auth/jwt.go', 7, 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	r, err := Open(ctx, Config{Path: path, Origin: "o"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var n int
	if err := r.ReadDB().QueryRow(`SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH 'files : "middleware go"'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("files column after the migration: %d rows, %v", n, err)
	}
	if err := r.ReadDB().QueryRow(`SELECT COUNT(*) FROM observation_files WHERE (name, path) IN (VALUES ('middleware.go', 'internal/auth/middleware.go'), ('jwt.go', 'internal/auth/jwt.go'))`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("basenames after the migration: %d rows, %v", n, err)
	}
	if _, err := r.w.ExecContext(ctx, `INSERT INTO observations_fts(observations_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("the rebuilt index disagrees with its content: %v", err)
	}
	if got := FileName("/a/b/c.go"); got != "c.go" || FileName("c.go") != "c.go" {
		t.Errorf("FileName: %q", got)
	}
}

// databaseAt creates a database at path as a memnode of schema version v left it (the
// first v migrations applied, through a plain connection) and returns it open.
func databaseAt(t *testing.T, path string, v int) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	entries, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries[:v] {
		body, err := migrationFiles.ReadFile("migrations/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if _, err := db.Exec(`INSERT INTO schema_version VALUES (?, 0)`, i+1); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

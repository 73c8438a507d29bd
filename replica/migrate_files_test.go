package replica

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
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
	if err := r.ReadDB().QueryRow(`SELECT COUNT(*) FROM observation_files f JOIN file_paths p ON p.id = f.path_id
		WHERE (p.name, p.path, f.modified) IN (VALUES ('middleware.go', 'internal/auth/middleware.go', 1), ('jwt.go', 'internal/auth/jwt.go', 0))`).Scan(&n); err != nil || n != 2 {
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

// TestFilePathsMigrationKeepsEveryRow: a database of schema v14 (observation_files holding
// each path and its name per row) is migrated to interned paths: the same (path, name,
// observation, modified) rows, each path once in file_paths, the file reads answer as
// before, and a forget deletes a path with the last observation that names it.
func TestFilePathsMigrationKeepsEveryRow(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: 1}},
		Observations: []memory.Observation{
			{SessionID: "s1", Project: "p", Type: "change", Title: "one", CreatedAt: 1,
				FilesModified: []string{"internal/auth/middleware.go"}, FilesRead: []string{"internal/auth/jwt.go", "internal/auth/middleware.go"}},
			{SessionID: "s1", Project: "p", Type: "change", Title: "two", CreatedAt: 2,
				FilesModified: []string{"internal/auth/jwt.go"}, FilesRead: []string{"cmd/jwt.go"}}}})
	if err != nil || len(res.Observations) != 2 {
		t.Fatalf("commit: %v", err)
	}
	rowsOf := func(q string) []string {
		t.Helper()
		rows, err := r.r.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var p, n string
			var obs, mod int64
			if err := rows.Scan(&p, &n, &obs, &mod); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(p, " ", n, " ", obs, " ", mod))
		}
		return out
	}
	const interned = "SELECT p.path, p.name, f.obs_rowid, f.modified FROM observation_files f JOIN file_paths p ON p.id = f.path_id ORDER BY 1, 3"
	want := rowsOf(interned)
	if len(want) != 4 {
		t.Fatalf("rows before: %q", want)
	}
	// Back to schema v14: the rows as that schema held them (short_ids, which migration 15 also drops, is not needed to run it again).
	for _, q := range []string{
		"CREATE TABLE old_files (path TEXT NOT NULL, obs_rowid INTEGER NOT NULL REFERENCES observations(rowid) ON DELETE CASCADE, modified INTEGER NOT NULL, name TEXT NOT NULL DEFAULT '', PRIMARY KEY (path, obs_rowid)) WITHOUT ROWID",
		"INSERT INTO old_files(path, obs_rowid, modified, name) SELECT p.path, f.obs_rowid, f.modified, p.name FROM observation_files f JOIN file_paths p ON p.id = f.path_id",
		"DROP TABLE observation_files", "DROP TABLE file_paths",
		"ALTER TABLE old_files RENAME TO observation_files",
		"CREATE INDEX observation_files_obs ON observation_files(obs_rowid)",
		"CREATE INDEX observation_files_name ON observation_files(name)",
		"DELETE FROM schema_version WHERE version >= 15",
	} {
		if _, err := r.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if got := rowsOf("SELECT path, name, obs_rowid, modified FROM observation_files ORDER BY 1, 3"); !slices.Equal(got, want) {
		t.Fatalf("v14 rows %q, want %q", got, want)
	}
	r.Close()
	if r, err = Open(ctx, Config{Path: path, Origin: "dev-a"}); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := rowsOf(interned); !slices.Equal(got, want) {
		t.Fatalf("after the migration: %q, want %q", got, want)
	}
	var paths int
	if err := r.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM file_paths").Scan(&paths); err != nil || paths != 3 {
		t.Fatalf("%d file paths (%v), want 3", paths, err)
	}
	byFile, err := r.ObservationsByFile(ctx, "p", []string{"internal/auth/jwt.go"}, 10)
	if err != nil || len(byFile) != 2 {
		t.Fatalf("observations of jwt.go: %d, %v", len(byFile), err)
	}
	hits, err := r.ListRecords(ctx, store.OpObservation, store.SearchFilter{File: "auth/middleware.go"}, false, 10)
	if err != nil || len(hits) != 1 || hits[0].ID != res.Observations[0].ID {
		t.Fatalf("file filter auth/middleware.go: %+v, %v", hits, err)
	}
	if _, err := r.Forget(ctx, []string{res.Observations[0].ID}); err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(interned); len(got) != 2 {
		t.Fatalf("after forgetting one: %q", got)
	}
	if err := r.r.QueryRowContext(ctx, "SELECT COUNT(*) FROM file_paths WHERE path = 'internal/auth/middleware.go'").Scan(&paths); err != nil || paths != 0 {
		t.Fatalf("the forgotten record's own path is still held (%d, %v)", paths, err)
	}
}

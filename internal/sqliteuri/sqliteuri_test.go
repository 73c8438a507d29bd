package sqliteuri_test

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/memnode/memnode/internal/sqliteuri"
)

// A database whose path holds each character SQLite's URI gives a meaning is created at that
// path, and nowhere else: the parent dir holds exactly the dir made for it.
func TestFileOpensThePathItNames(t *testing.T) {
	for _, name := range []string{"a#b", "a?b", "a%20b", "a%b", "seed#0?x=1"} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, name)
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "x.db")
			q := url.Values{}
			q.Set("_journal_mode", "WAL")
			db, err := sql.Open("sqlite3", sqliteuri.File(path, q))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.ExecContext(context.Background(), "CREATE TABLE t(x)"); err != nil {
				t.Fatal(err)
			}
			var mode string
			if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
				t.Fatalf("the query's option was not applied: journal_mode %q, %v", mode, err)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("the database is not at its path: %v", err)
			}
			entries, err := os.ReadDir(parent)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Fatalf("files beside the dir: %q", names)
			}
		})
	}
}

func TestFileWithoutOptions(t *testing.T) {
	if got := sqliteuri.File("/x/a#b.db", nil); got != "file:/x/a%23b.db" {
		t.Fatalf("File = %q", got)
	}
}

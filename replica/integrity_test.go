package replica_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
)

func TestOpenRefusesACorruptFile(t *testing.T) {
	ctx := context.Background()
	cases := map[string]func(t *testing.T, path string){
		"damaged pages": func(t *testing.T, path string) { testkit.CorruptDB(t, path) },
		"truncated": func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2/4096*4096); err != nil {
				t.Fatal(err)
			}
		},
		"a damaged root page": func(t *testing.T, path string) { damageRoot(t, path, "observations") },
		"not a database": func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(strings.Repeat("not sqlite ", 1000)), 0o600); err != nil {
				t.Fatal(err)
			}
		},
	}
	for name, corrupt := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memnode.db")
			r, err := replica.Open(ctx, replica.Config{Path: path, Origin: "a"})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			corrupt(t, path)
			r, err = replica.Open(ctx, replica.Config{Path: path, Origin: "a"})
			if err == nil {
				r.Close()
				t.Fatal("a corrupt file opened")
			}
			if !errors.Is(err, replica.ErrCorrupt) || !replica.IsCorrupt(err) {
				t.Fatalf("err = %v; want ErrCorrupt", err)
			}
		})
	}
}

func TestOpenAcceptsAHealthyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memnode.db")
	for i := 0; i < 2; i++ { // created, then reopened: quick_check passes both times
		r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: "a"})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		r.Close()
	}
	if replica.IsCorrupt(errors.New("disk I/O error")) {
		t.Fatal("an unrelated error counts as corruption")
	}
}

// damageRoot overwrites the root page of table with bytes no b-tree page starts with.
func damageRoot(t *testing.T, path, table string) {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	var root int64
	err = db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = ?", table).Scan(&root)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 4096)), (root-1)*4096); err != nil {
		t.Fatal(err)
	}
}

// TestOpenChecksRootsNotData (issue 29): the open's check reads the header, the schema and
// the root pages, not the data: a leaf deep in the observations b-tree damaged on disk
// does not stop the open (it would cost a read of every page to find), and the full check
// the node runs in the background after ready finds it.
func TestOpenChecksRootsNotData(t *testing.T) {
	ctx := context.Background()
	path, _ := salvageSource(t, 3000)
	testkit.DamageDataPages(t, path, 8)
	r2, err := replica.Open(ctx, replica.Config{Path: path, Origin: "a"})
	if err != nil {
		t.Fatalf("open read past the roots into the data: %v", err)
	}
	defer r2.Close()
	if err := r2.CheckIntegrity(ctx); !errors.Is(err, replica.ErrCorrupt) {
		t.Fatalf("the full check: %v, want ErrCorrupt", err)
	}
}

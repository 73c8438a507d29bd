// Package testkit is memnode's one set of test helpers: poll for a condition, check that a
// test leaves no goroutine running, open a replica on a real SQLite file.
package testkit

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/dbtemplate"
	"github.com/memnode/memnode/internal/sqliteuri"
	"github.com/memnode/memnode/replica"
)

// pollEvery is the polling interval of WaitFor: short enough not to slow a test down.
const pollEvery = 10 * time.Millisecond

// WaitFor polls cond until it holds, failing the test after timeout. Tests use it instead
// of sleeping: it returns as soon as the condition is true.
func WaitFor(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	WaitForState(tb, what, timeout, func() (bool, string) { return cond(), "" })
}

// WaitForState is WaitFor for a condition that also describes its last state, which the
// failure message shows.
func WaitForState(tb testing.TB, what string, timeout time.Duration, cond func() (bool, string)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if state != "" {
				tb.Fatalf("timed out after %s waiting for %s: %s", timeout, what, state)
			}
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(pollEvery) // polling interval, not synchronisation
	}
}

// migrated is the schema a fresh replica starts from in a test: built once per test binary by
// replica.Open, then copied (internal/dbtemplate), so a test's replica does not run the
// migrations again. Tests of the migrations and of what Open does to a new file open
// theirs with replica.Open.
var migrated = dbtemplate.New(func(path string) error {
	r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: "template"})
	if err != nil {
		return err
	}
	return r.Close()
})

// PlaceMigrated puts an up-to-date replica schema at path unless a file is already there;
// replica.Open on path then has no migration to run.
func PlaceMigrated(tb dbtemplate.TB, path string) { migrated.Place(tb, path) }

// OpenReplica opens a replica on a fresh SQLite file in a temp dir; it is closed when the
// test ends.
func OpenReplica(tb testing.TB, origin string) *replica.Replica {
	tb.Helper()
	return OpenReplicaAt(tb, filepath.Join(tb.TempDir(), "memnode.db"), origin)
}

// OpenReplicaWithFeed opens a replica on a fresh SQLite file that publishes its commits to
// the returned change feed; both are closed when the test ends.
func OpenReplicaWithFeed(tb testing.TB, origin string) (*replica.Replica, *feed.Bus) {
	tb.Helper()
	bus := feed.New()
	tb.Cleanup(bus.Close) // cleanups run last-in first-out: after the replica's Close
	path := filepath.Join(tb.TempDir(), "memnode.db")
	PlaceMigrated(tb, path)
	r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: origin, Feed: bus})
	if err != nil {
		tb.Fatalf("open replica: %v", err)
	}
	tb.Cleanup(func() { r.Close() })
	return r, bus
}

// OpenReplicaAt opens the replica at path (a fresh one starts from the migrated template);
// it is closed when the test ends.
func OpenReplicaAt(tb testing.TB, path, origin string) *replica.Replica {
	tb.Helper()
	PlaceMigrated(tb, path)
	r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: origin})
	if err != nil {
		tb.Fatalf("open replica: %v", err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// CorruptDB damages the closed SQLite file at path the way a failing disk does: the header
// stays, every later page is overwritten with bytes no b-tree page can start with.
func CorruptDB(tb testing.TB, path string) {
	tb.Helper()
	for _, side := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			tb.Fatal(err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	const pageSize = 4096
	if st.Size() <= pageSize {
		tb.Fatalf("corrupt %s: %d bytes, need more than one page", path, st.Size())
	}
	junk := bytes.Repeat([]byte{0xff}, int(st.Size()-pageSize))
	if _, err := f.WriteAt(junk, pageSize); err != nil {
		tb.Fatal(err)
	}
}

// DamageDataPages damages a closed SQLite file deep inside, where no open looks: n pages a
// third into the file, none of them the root page of a table or index, are overwritten with
// bytes no b-tree page starts with. The open's check (header, schema, roots) passes; a full
// quick_check does not.
func DamageDataPages(tb testing.TB, path string, n int64) {
	tb.Helper()
	db, err := sql.Open("sqlite3", sqliteuri.File(path, nil))
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var busy, frames, done int
	if err := db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &frames, &done); err != nil || busy != 0 {
		tb.Fatalf("checkpoint %s: busy %d, %v", path, busy, err)
	}
	roots := map[int64]bool{}
	rows, err := db.Query("SELECT rootpage FROM sqlite_schema WHERE rootpage > 0")
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			tb.Fatal(err)
		}
		roots[p] = true
	}
	rows.Close()
	var pages, pageSize int64
	if err := db.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		tb.Fatal(err)
	}
	if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		tb.Fatal(err)
	}
	if pages < 3*n {
		tb.Fatalf("damage %s: %d pages, too few to damage %d a third in", path, pages, n)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	junk := bytes.Repeat([]byte{0xff}, int(pageSize))
	for p := pages / 3; p < pages/3+n; p++ {
		if roots[p] {
			continue
		}
		if _, err := f.WriteAt(junk, (p-1)*pageSize); err != nil {
			tb.Fatal(err)
		}
	}
}

// FilesContaining returns the regular files below dir (relative paths) whose bytes contain
// needle. Sockets, pipes and links are passed over: a running node keeps its socket there.
func FilesContaining(tb testing.TB, dir, needle string) []string {
	tb.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(needle)) {
			rel, _ := filepath.Rel(dir, p)
			hits = append(hits, rel)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("read the files below %s: %v", dir, err)
	}
	return hits
}

// FastTempDir is a test temp dir on tmpfs when the machine has one (/dev/shm), else
// tb.TempDir(): the SQLite files in it are real either way, but tests that write tens of
// thousands of fsynced transactions take minutes on a disk.
func FastTempDir(tb testing.TB) string {
	tb.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "memnode-test-"); err == nil {
			tb.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return tb.TempDir()
}

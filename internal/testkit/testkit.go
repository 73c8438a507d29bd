// Package testkit is memnode's one set of test helpers: poll for a condition, check that a
// test leaves no goroutine running, open a replica on a real SQLite file.
package testkit

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memnode/memnode/feed"
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
	r, err := replica.Open(context.Background(), replica.Config{Path: filepath.Join(tb.TempDir(), "memnode.db"), Origin: origin, Feed: bus})
	if err != nil {
		tb.Fatalf("open replica: %v", err)
	}
	tb.Cleanup(func() { r.Close() })
	return r, bus
}

// OpenReplicaAt opens the replica at path; it is closed when the test ends.
func OpenReplicaAt(tb testing.TB, path, origin string) *replica.Replica {
	tb.Helper()
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

package sync

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/store"
)

// failingStore is the real replica with ApplyOps failing while fail is set.
type failingStore struct {
	Store
	fail atomic.Bool
}

var errDiskFull = errors.New("database or disk is full")

func (s *failingStore) ApplyOps(ctx context.Context, ops []store.Op) (store.ApplyResult, error) {
	if s.fail.Load() {
		return store.ApplyResult{}, errDiskFull
	}
	return s.Store.ApplyOps(ctx, ops)
}

// A session that keeps failing shows in Status as an error with its cause, is logged at WARN
// once (not per retry), and clears when sync works again.
func TestRepeatedSessionFailureShowsInStatus(t *testing.T) {
	checkGoroutines(t)
	a := startNode(t, "dev-a", t.TempDir(), nil)
	var fs *failingStore
	blogs := &logBuf{}
	b := startNode(t, "dev-b", t.TempDir(), blogs, func(c *nodeSetup) {
		fs = &failingStore{Store: c.Store}
		c.Store = fs
	})
	b.join(a)
	a.write("s1", "before the failure")
	converged(t, 10*time.Second, a, b)

	fs.fail.Store(true)
	a.write("s1", "blocked by a full disk")
	errOf := func() string {
		for _, d := range b.status().Devices {
			if d.PeerID == a.id.String() {
				return d.Error
			}
		}
		return ""
	}
	waitFor(t, 20*time.Second, "B to show a sync error for A", func() (bool, string) {
		e := errOf()
		return strings.Contains(e, errDiskFull.Error()), e
	})
	// More failing sessions run (anti-entropy every second); the WARN stays one line.
	waitFor(t, 20*time.Second, "more failed sessions", func() (bool, string) {
		return fs.fail.Load() && strings.Count(blogs.String(), "level=DEBUG msg=\"sync session failed\"") >= 2*failWarn, ""
	})
	if n := strings.Count(blogs.String(), "sync with peer keeps failing"); n != 1 {
		t.Fatalf("%d WARN lines for one failure streak, want 1:\n%s", n, blogs.String())
	}

	fs.fail.Store(false)
	converged(t, 20*time.Second, a, b)
	waitFor(t, 20*time.Second, "the error to clear", func() (bool, string) {
		e := errOf()
		return e == "", e
	})
}

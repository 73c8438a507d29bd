package replica

import (
	"context"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"path/filepath"
	"sync"
	"testing"

	"github.com/memnode/memnode/memory"
)

func openCountReplica(t *testing.T, origin string) *Replica {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memnode.db")
	PlaceMigrated(t, path)
	r, err := Open(context.Background(), Config{Path: path, Origin: origin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func wantCount(t *testing.T, r *Replica, match string, want int, when string) {
	t.Helper()
	c, err := r.CountMatches(context.Background(), store.OpObservation, match, 100)
	if err != nil || c != want {
		t.Fatalf("%s: CountMatches(%s) = %d, %v; want %d", when, match, c, err, want)
	}
}

// TestCountMatchesFollowsEveryWrite: a count is kept between commits, and every kind of
// write — a local commit, a forget, ops applied from another device — is seen by the next
// count. A count served from before the write would make search skip a term it now finds.
func TestCountMatchesFollowsEveryWrite(t *testing.T) {
	ctx := context.Background()
	a, b := openCountReplica(t, "dev-a"), openCountReplica(t, "dev-b")
	zebra := func(title string) *store.Batch {
		return &store.Batch{Observations: []memory.Observation{{SessionID: "s", Project: "p", Type: "change", Title: title, CreatedAt: 1}}}
	}
	wantCount(t, b, `"zebra"`, 0, "empty")
	wantCount(t, b, `"zebra"`, 0, "empty, asked again")
	if at := b.commits.Load(); b.counts.at != at || len(b.counts.m) != 1 {
		t.Fatalf("the count was not kept: %d answers read at commit %d, now %d", len(b.counts.m), b.counts.at, at)
	}

	res, err := b.Commit(ctx, zebra("zebra crossing"))
	if err != nil {
		t.Fatal(err)
	}
	wantCount(t, b, `"zebra"`, 1, "after a local commit")

	if _, err := b.Forget(ctx, []string{res.Observations[0].ID}); err != nil {
		t.Fatal(err)
	}
	wantCount(t, b, `"zebra"`, 0, "after a forget")

	if _, err := a.Commit(ctx, zebra("zebra stripes")); err != nil {
		t.Fatal(err)
	}
	ops, err := a.OpsSince(ctx, "dev-a", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ApplyOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	wantCount(t, b, `"zebra"`, 1, "after ops from another device")
}

// TestCountMatchesUnderConcurrentCommits: counting while commits land, a count taken after
// a commit has returned never misses it (run with -race).
func TestCountMatchesUnderConcurrentCommits(t *testing.T) {
	ctx := context.Background()
	r := openCountReplica(t, "dev-a")
	const commits = 40
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := r.CountMatches(ctx, store.OpObservation, `"quagga"`, 1000); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := 1; i <= commits; i++ {
		if _, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s", Project: "p", Type: "change",
			Title: fmt.Sprintf("quagga %d", i), CreatedAt: int64(i)}}}); err != nil {
			t.Fatal(err)
		}
		wantCount(t, r, `"quagga"`, i, fmt.Sprintf("after commit %d", i))
	}
	close(stop)
	wg.Wait()
}

// TestMatchCountsKeepOnlyTheNewest: an answer read before the last commit is dropped, a
// newer one replaces the older answers, and the map stays bounded.
func TestMatchCountsKeepOnlyTheNewest(t *testing.T) {
	var mc matchCounts
	k := func(m string) countKey { return countKey{kind: store.OpObservation, match: m, max: 10} }
	mc.put(k("a"), 5, 1)
	if c, ok := mc.get(k("a"), 5); !ok || c != 1 {
		t.Fatalf("get at 5: %d %v", c, ok)
	}
	if _, ok := mc.get(k("a"), 6); ok {
		t.Fatal("an answer from commit 5 served at commit 6")
	}
	mc.put(k("b"), 4, 2) // read before commit 5 ended: stale
	if _, ok := mc.get(k("b"), 4); ok {
		t.Fatal("a stale answer was kept")
	}
	mc.put(k("c"), 6, 3)
	if _, ok := mc.get(k("a"), 6); ok {
		t.Fatal("commit 5's answer survived a newer one")
	}
	for i := range maxMatchCounts + 10 {
		mc.put(k(fmt.Sprint("t", i)), 6, i)
	}
	if len(mc.m) > maxMatchCounts {
		t.Fatalf("%d answers kept, bound %d", len(mc.m), maxMatchCounts)
	}
}

// TestIndexReadsFailWithAnEndedContext: the index reads run to their end once started
// (uncancelled), but one asked with a context that has already ended fails with its error.
func TestIndexReadsFailWithAnEndedContext(t *testing.T) {
	r := openCountReplica(t, "dev-a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.WindowMatches(ctx, store.OpObservation, store.WindowQuery{Match: `"zebra"`, Window: 10, Limit: 10}); !errors.Is(err, context.Canceled) {
		t.Fatalf("WindowMatches with an ended context: %v", err)
	}
	if _, err := r.CountMatches(ctx, store.OpObservation, `"zebra"`, 10); !errors.Is(err, context.Canceled) {
		t.Fatalf("CountMatches with an ended context: %v", err)
	}
}

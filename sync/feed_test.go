package sync

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// A commit is pushed because the replica published it on the feed: with anti-entropy
// rounds an hour apart and no NotifyLocalWrite call, nothing else could carry it.
func TestFeedWakesPushWithoutPolling(t *testing.T) {
	checkGoroutines(t)
	hour := func(c *nodeSetup) { c.AntiEntropyInterval = time.Hour }
	a := startNode(t, "a", t.TempDir(), nil, hour)
	b := startNode(t, "b", t.TempDir(), nil, hour)
	b.join(a)
	// Once both see each other alive and hold the same state, the sessions that pairing and
	// gossip start are over.
	waitFor(t, 10*time.Second, "both devices alive to each other", func() (bool, string) {
		sa, sb := a.deviceState(b), b.deviceState(a)
		return sa == StateAlive && sb == StateAlive, sa + " " + sb
	})
	converged(t, 10*time.Second, a, b)

	res, err := a.rep.Commit(context.Background(), &store.Batch{
		Sessions:     []memory.Session{{ID: "s-feed", Project: "demo", StartedAt: 1}},
		Observations: []memory.Observation{{SessionID: "s-feed", Project: "demo", Type: "discovery", Title: "echidna", CreatedAt: time.Now().UnixMilli()}},
	})
	if err != nil || len(res.Observations) != 1 {
		t.Fatalf("commit: %+v %v", res, err)
	}
	waitFor(t, 10*time.Second, "the commit pushed to b", func() (bool, string) {
		n := b.searchCount("echidna")
		return n == 1, fmt.Sprint(n)
	})
}

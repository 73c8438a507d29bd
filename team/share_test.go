package team

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

// TestTeamShareDuringTheJoinScanPushesEverything: a device with 30,000 observations joins
// and shares at once, while the scan its join started is still reading the history. The
// share's rescan is not overwritten by that scan: all 30,000 reach bob, and the push
// backlog counts them while they drain (the issue: 0 pushed, backlog 0, in 2 of 2 runs).
func TestTeamShareDuringTheJoinScanPushesEverything(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	const P, n = "history", 30000
	a, b := newMember(t, "alice", "laptop"), newMember(t, "bob", "desktop")
	for i := 0; i < n; i += 1000 {
		batch := &store.Batch{}
		for j := i; j < i+1000; j++ {
			batch.Observations = append(batch.Observations, obs(P, fmt.Sprintf("old %d", j), j))
		}
		if _, err := a.r.Commit(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	b.join(t, c, P)
	b.t.Start(ctx)
	a.join(t, c)
	a.t.Start(ctx) // its first push scans the 30,000 ops: nothing shared yet
	testkit.WaitFor(t, "the join's scan under way", 30*time.Second, func() bool {
		v, _ := a.t.st.get(ctx, "scanned")
		s, _ := strconv.Atoi(v)
		return s > 0
	})
	if err := a.t.Share(ctx, P); err != nil {
		t.Fatal(err)
	}
	if st := a.status(t); st.PushBacklog < n/2 {
		t.Fatalf("push backlog right after the share: %d, want the history's %d ops not yet pushed", st.PushBacklog, n)
	}
	// Under -race one pull of the 30,000 takes 170-180 s on the shared 2 cores (load 9-12):
	// a wait, not a bound.
	testkit.WaitForState(t, "all 30,000 on bob", 10*time.Minute, func() (bool, string) {
		got := b.count(t, P)
		return got == n, fmt.Sprintf("bob holds %d; alice %+v", got, a.status(t))
	})
	testkit.WaitForState(t, "alice's backlog drained", 30*time.Second, func() (bool, string) {
		st := a.status(t)
		return st.PushBacklog == 0, fmt.Sprintf("%+v", st)
	})
}

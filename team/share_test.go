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

// TestTeamShareDuringTheJoinScanPushesEverything: a device with 3,000 observations joins
// and shares at once, while the scan its join started is still reading the history (in 30
// batches of 100: the 30,000 in batches of 1,000 made the same 30 steps, ten times
// the work, 58 s of team's race run). The share's rescan is not overwritten by that scan:
// all 3,000 reach bob, and the push backlog counts them while they drain (the issue: 0
// pushed, backlog 0, in 2 of 2 runs). The test fails when the scan was over before the
// share: then it would have tested nothing.
func TestTeamShareDuringTheJoinScanPushesEverything(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	const P, n, batchSize = "history", 3000, 100
	a := newTunedMember(t, "alice", "laptop", func(c *Config) { c.Batch = batchSize })
	b := newMember(t, "bob", "desktop")
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
	a.t.Start(ctx) // its first push scans the 3,000 ops: nothing shared yet
	own := a.r.Origin()
	vv, err := a.r.VersionVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scanned := func() uint64 {
		v, _ := a.t.st.get(ctx, "scanned")
		s, _ := strconv.ParseUint(v, 10, 64)
		return s
	}
	testkit.WaitFor(t, "the join's scan under way", 30*time.Second, func() bool { return scanned() > 0 })
	// Not after the share: the rescan it asks for starts again from 0.
	if s := scanned(); s >= vv[own] {
		t.Fatalf("the join's scan had read all %d ops before the share: the share comes too late to test anything", s)
	}
	if err := a.t.Share(ctx, P); err != nil {
		t.Fatal(err)
	}
	if st := a.status(t); st.PushBacklog < n/2 {
		t.Fatalf("push backlog right after the share: %d, want the history's %d ops not yet pushed", st.PushBacklog, n)
	}
	// A wait, not a bound (under -race the 30,000 took 170-180 s on the shared 2
	// cores at load 9-12).
	testkit.WaitForState(t, "all 3,000 on bob", 10*time.Minute, func() (bool, string) {
		got := b.count(t, P)
		return got == n, fmt.Sprintf("bob holds %d; alice %+v", got, a.status(t))
	})
	testkit.WaitForState(t, "alice's backlog drained", 30*time.Second, func() (bool, string) {
		st := a.status(t)
		return st.PushBacklog == 0, fmt.Sprintf("%+v", st)
	})
}

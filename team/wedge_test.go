package team

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

// clock is a wall clock a test moves: the real time plus an offset.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time       { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) add(d time.Duration)  { c.offset.Add(int64(d)) }
func newClock(d time.Duration) *clock { c := &clock{}; c.add(d); return c }

// newClockedMember is newMember whose replica and team read clk: a device whose clock is
// off, without touching anyone else's.
func newClockedMember(tb testing.TB, user, device string, clk *clock) *member {
	tb.Helper()
	key, origin := newKey(tb)
	bus := feed.New()
	tb.Cleanup(bus.Close)
	path := filepath.Join(tb.TempDir(), "memnode.db")
	testkit.PlaceMigrated(tb, path)
	r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: origin, Feed: bus, Now: clk.now})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	tm, err := New(context.Background(), Config{StatePath: filepath.Join(tb.TempDir(), "team.db"), OpenState: openStateDB, Replica: r, Key: key,
		Device: device, Feed: bus, Every: 50 * time.Millisecond, Timeout: 3 * time.Second, Now: clk.now})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tm.Close() })
	return &member{t: tm, r: r, key: key, user: user}
}

// TestTeamFastClockStallsOnlyItsAuthor: on a real rqlite cluster, fast's clock is 10
// minutes ahead (beyond the 5-minute bound) and mallory writes an op stamped 10 years
// ahead. Alice still gets all 2,500 of bob's ops in the same project and bob's record of
// another project; mallory's op is refused and named; fast's ops are held, fast named in
// alice's status as stalled, and they arrive once alice's clock has caught up — nothing
// re-fetched, nothing lost.
func TestTeamFastClockStallsOnlyItsAuthor(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: append(users(), rqlitetest.User{Username: "fast", Password: testPassword, Perms: []string{"execute", "query", "status"}})})
	ctx := context.Background()
	const P, Q, n = "billing", "ops", 2500
	aliceClock := newClock(0)
	a := newClockedMember(t, "alice", "laptop", aliceClock)
	f := newClockedMember(t, "fast", "laptop", newClock(10*time.Minute))
	b, m := newMember(t, "bob", "desktop"), newMember(t, "mallory", "evil")
	for _, x := range []*member{a, f, b, m} {
		x.join(t, c, P, Q)
	}
	a.t.Start(ctx)
	for i := 0; i < 20; i++ {
		f.record(t, P, fmt.Sprintf("FAST record %d", i))
	}
	if err := f.t.Push(ctx); err != nil {
		t.Fatal(err)
	}
	malRec := m.record(t, P, "MALLORY template")
	rogue{m}.write(t, Op{Project: P, Kind: store.OpObservation, RecordID: "rogue-future", HLC: uint64(time.Now().AddDate(10, 0, 0).UnixMilli()) << 16,
		Payload: edited(t, m.payloadOf(t, malRec), "id", "rogue-future", "title", "FUTURE record")})
	batch := &store.Batch{}
	for j := 0; j < n; j++ {
		batch.Observations = append(batch.Observations, obs(P, fmt.Sprintf("bob bulk %d", j), j))
	}
	if _, err := b.r.Commit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	b.record(t, Q, "BOB record of the other project")
	for _, x := range []*member{b, m} {
		if err := x.t.Push(ctx); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitForState(t, "all of bob's ops on alice, fast named", 60*time.Second, func() (bool, string) {
		st := a.status(t)
		got := a.count(t, P)
		return got >= n && a.has(t, "BOB record of the other project") && len(st.Stalled) == 1 && st.PullLag == 0,
			fmt.Sprintf("%d of bob's ops; status %+v", got, st)
	})
	st := a.status(t)
	if s := st.Stalled[0]; s.Author != "fast/laptop" || s.Project != P || s.Held < 20 || !strings.Contains(s.Reason, "ahead of this device's clock") {
		t.Fatalf("stall: %+v", s)
	}
	if a.has(t, "FAST record 0") || a.has(t, "FUTURE record") {
		t.Fatal("alice applied an op stamped beyond her clock bound")
	}
	found := false
	for _, r := range st.Refused {
		found = found || r.Author == "mallory/evil" && strings.Contains(r.Reason, "ahead of this device's clock")
	}
	if !found || st.Rejected != 1 {
		t.Fatalf("the op 10 years ahead: rejected %d, refused %+v", st.Rejected, st.Refused)
	}
	// Alice's clock catches up: the held ops apply from her state, fast's stall ends.
	aliceClock.add(10 * time.Minute)
	testkit.WaitForState(t, "fast's records on alice", 30*time.Second, func() (bool, string) {
		st := a.status(t)
		return a.has(t, "FAST record 19") && len(st.Stalled) == 0, fmt.Sprintf("%+v", st.Stalled)
	})
	if a.has(t, "FUTURE record") {
		t.Fatal("the refused op applied later")
	}
}

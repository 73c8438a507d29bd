package sync

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/memnode/memnode/store"
)

func snapshotsOn(c *nodeSetup)  { c.SnapshotMin = 1 }
func snapshotsOff(c *nodeSetup) { c.SnapshotMin = -1 }

// waitSnapshots waits until t has counted want installed snapshots: the counter moves just
// after the install committed, so a test that saw the data may be a moment early.
func waitSnapshots(tb testing.TB, t *tnode, want int64) {
	tb.Helper()
	waitFor(tb, 10*time.Second, t.name+" to count its snapshot", func() (bool, string) {
		got := t.node.stats.SnapshotsInstalled.Load()
		return got == want, fmt.Sprint(got, " snapshots")
	})
}

// waitCounted waits until count reaches at least want and returns it: a counter moves just
// after what it counts (an apply commits, then OpsApplied moves; the last message is sent and
// the receiver may install it before SnapshotsServed or OpsSent moves), so a test that saw
// the data may read it a moment early.
func waitCounted(tb testing.TB, what string, count func() int64, want int64) int64 {
	tb.Helper()
	var got int64
	waitFor(tb, 10*time.Second, what, func() (bool, string) {
		got = count()
		return got >= want, fmt.Sprint(got)
	})
	return got
}

// TestNewDeviceStartsFromSnapshotAndServesOthers: A and B hold a history with session
// updates, a forget, compacted ops and a removed device's writes up to its cut. A new device
// C joins and starts from a snapshot (its stats say so, and it applied no op one by one),
// equal to A and B, searchable. D, forced onto op replay and able to reach only C, catches up
// from C's op-log — ops C never applied one by one — and is equal too. Then a new write on A
// reaches C and D.
func TestNewDeviceStartsFromSnapshotAndServesOthers(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: several real devices for seconds (make test runs it)")
	}
	checkGoroutines(t)
	manual := func(c *nodeSetup) { c.CompactInterval = -1 }
	a := startNode(t, "dev-a", t.TempDir(), nil, snapshotsOn, manual)
	b := startNode(t, "dev-b", t.TempDir(), nil, snapshotsOn, manual)
	x := startNode(t, "dev-x", t.TempDir(), nil, snapshotsOn, manual)
	b.join(a)
	x.join(a)
	var forgettable string
	for i := range 20 {
		a.write(fmt.Sprintf("sa%d", i%3), fmt.Sprintf("alpha record %d", i))
		id := b.write(fmt.Sprintf("sb%d", i%3), fmt.Sprintf("bravo record %d", i))
		if i == 7 {
			forgettable = id
		}
	}
	x.write("sx", "xray before removal")
	converged(t, 30*time.Second, a, b, x)
	if _, err := a.rep.Forget(context.Background(), []string{forgettable}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.node.Remove(context.Background(), "dev-x"); err != nil {
		t.Fatal(err)
	}
	x.write("sx", "xray after removal") // never reaches anyone
	x.stop()
	converged(t, 30*time.Second, a, b)
	// Compact A once B has told A it holds everything.
	waitFor(t, 30*time.Second, "A to know B holds everything", func() (bool, string) {
		floor, err := a.node.compactFloor(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return maps.Equal(floor, a.vv()), fmt.Sprintf("floor %v, vv %v", floor, a.vv())
	})
	res, err := a.node.Compact(context.Background())
	if err != nil || res.Removed() == 0 {
		t.Fatalf("compaction: %+v, %v; the history needs placeholders", res, err)
	}

	servedBefore := a.node.stats.SnapshotsServed.Load() + b.node.stats.SnapshotsServed.Load() // B and X joined blank too
	c := startNode(t, "dev-c", t.TempDir(), nil, snapshotsOn)
	c.join(a)
	converged(t, 30*time.Second, a, b, c)
	waitSnapshots(t, c, 1)
	if got := c.node.stats.OpsApplied.Load(); got != 0 {
		t.Fatalf("C applied %d ops one by one; it should have started from a snapshot", got)
	}
	if served := waitCounted(t, "A and B to count the snapshot they served", func() int64 {
		return a.node.stats.SnapshotsServed.Load() + b.node.stats.SnapshotsServed.Load() - servedBefore
	}, 1); served != 1 {
		t.Fatalf("A and B served %d snapshots, want 1", served)
	}
	if n := c.searchCount("alpha AND record"); n != 20 {
		t.Fatalf("C's search finds %d of A's 20 records", n)
	}
	if n := c.searchCount("xray"); n != 1 {
		t.Fatalf("C holds %d of the removed device's records, want the 1 before its cut", n)
	}

	d := startNode(t, "dev-d", t.TempDir(), nil, snapshotsOff)
	a.node.refuse(d.id)
	b.node.refuse(d.id)
	d.node.refuse(a.id, b.id)
	d.join(c)
	converged(t, 30*time.Second, a, c, d)
	if got := d.node.stats.SnapshotsInstalled.Load(); got != 0 {
		t.Fatalf("D installed %d snapshots; it was to replay ops", got)
	}
	waitCounted(t, "D to count the ops it applied (none: it did not replay ops)", d.node.stats.OpsApplied.Load, 1)
	waitCounted(t, "C to count the ops it sent (none: D did not catch up from C's op-log)", c.node.stats.OpsSent.Load, 1)

	for _, n := range []*Node{a.node, b.node, d.node} {
		n.setCut(nil)
	}
	a.write("sa-late", "charlie after the snapshot")
	converged(t, 30*time.Second, a, b, c, d)
	if c.searchCount("charlie") != 1 || d.searchCount("charlie") != 1 {
		t.Fatal("a write after the snapshot did not reach C and D")
	}
}

// TestSnapshotFallsBackToOpReplayWithAnOldPeer: a device that does not speak ProtocolSyncS
// (an older memnode; here one that speaks only the plain protocol) is caught up from by op
// replay.
func TestSnapshotFallsBackToOpReplayWithAnOldPeer(t *testing.T) {
	checkGoroutines(t)
	old := startNode(t, "dev-old", t.TempDir(), nil, func(c *nodeSetup) { c.plainOnly = true })
	for i := range 10 {
		old.write("s", fmt.Sprintf("old record %d", i))
	}
	c := startNode(t, "dev-c", t.TempDir(), nil, snapshotsOn)
	c.join(old)
	converged(t, 30*time.Second, old, c)
	if got := c.node.stats.SnapshotsInstalled.Load(); got != 0 {
		t.Fatalf("C installed %d snapshots from a device that cannot send one", got)
	}
	// The counter moves just after the apply commits: converged may see the data first.
	waitCounted(t, "C to count the old device's history among the ops it applied", c.node.stats.OpsApplied.Load, 10)
}

// cuttingStream fails every read after limit bytes while its switch is on: a connection cut
// in the middle of a snapshot.
type cuttingStream struct {
	network.Stream
	on    *atomic.Bool
	read  int
	limit int
	cuts  *atomic.Int64
}

var errCutMidway = errors.New("connection cut midway")

func (s *cuttingStream) Read(b []byte) (int, error) {
	if s.on.Load() && s.read >= s.limit {
		s.cuts.Add(1)
		s.Stream.Reset()
		return 0, errCutMidway
	}
	n, err := s.Stream.Read(b)
	s.read += n
	return n, err
}

// TestSnapshotCutMidwayResumes: every connection of the new device C is cut after 48 KiB,
// far less than A's snapshot, and A serves it in chunks of 8 KiB. Each session commits the
// chunks it received and the next one resumes after them: C's vector claims nothing of A
// while it is in the middle (so no one asks it for A's ops), the installed rows only grow,
// and C ends with all of A's state through connections none of which could carry the
// whole snapshot. (With a snapshot installed in one transaction, C would stay blank for
// ever.)
func TestSnapshotCutMidwayResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: several real devices for seconds (make test runs it)")
	}
	checkGoroutines(t)
	a := startNode(t, "dev-a", t.TempDir(), nil, snapshotsOn, func(cfg *nodeSetup) { cfg.snapChunkBytes = 8 << 10 })
	a.history(3000, 0, 0)
	var on atomic.Bool
	var cuts atomic.Int64
	on.Store(true)
	c := startNode(t, "dev-c", t.TempDir(), nil, snapshotsOn, func(cfg *nodeSetup) {
		cfg.wrapStream = func(s network.Stream) network.Stream {
			return &cuttingStream{Stream: s, on: &on, limit: 48 << 10, cuts: &cuts}
		}
	})
	c.join(a)
	var rows int64
	waitFor(t, 60*time.Second, "C's snapshot sessions to be cut twice with rows installed", func() (bool, string) {
		p, err := c.rep.SnapshotProgress(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if p.Active && p.Rows < rows {
			t.Fatalf("C's installed rows went back from %d to %d", rows, p.Rows)
		}
		rows = max(rows, p.Rows)
		if p.Active {
			if got := c.vv()[a.id.String()]; got != 0 {
				t.Fatalf("C's vector claims %d of A's ops in the middle of a snapshot (%d of %d rows)", got, p.Rows, p.Total)
			}
		}
		return cuts.Load() >= 2 && p.Active && p.Rows > 0, fmt.Sprintf("%d cuts, %+v", cuts.Load(), p)
	})
	if st := c.status(); st.Snapshot == nil || st.Snapshot.Rows == 0 || st.Snapshot.Rows >= st.Snapshot.Total {
		t.Fatalf("C's status in the middle of a snapshot: %+v", st.Snapshot)
	}
	converged(t, 120*time.Second, a, c) // still cut after 48 KiB each time
	waitSnapshots(t, c, 1)
	if cuts.Load() < 4 {
		t.Fatalf("only %d cuts: the snapshot was not larger than one connection's share", cuts.Load())
	}
	if st := c.status(); st.Snapshot != nil {
		t.Fatalf("C's status after the install still shows a snapshot: %+v", st.Snapshot)
	}
}

// tricklingStream is a slow but live link: every write goes out in small pieces with a pause
// between them (a simulated link speed, not synchronisation), so each read of the other side
// makes progress and no idle deadline fires. failed counts writes the other side cut.
type tricklingStream struct {
	network.Stream
	on     *atomic.Bool
	failed *atomic.Int64
}

func (s *tricklingStream) Write(b []byte) (int, error) {
	if !s.on.Load() {
		return s.Stream.Write(b)
	}
	done := 0
	for done < len(b) {
		piece := b[done:min(len(b), done+256)]
		time.Sleep(10 * time.Millisecond)
		n, err := s.Stream.Write(piece)
		done += n
		if err != nil {
			s.failed.Add(1)
			return done, err
		}
	}
	return done, nil
}

// TestSnapshotFromATricklingPeerOutlivesTheSessionDeadline: a member that sends a snapshot
// slowly but steadily (25 KB/s, chunks of 8 KiB) to a new device whose session deadline is
// 2 s: the whole snapshot takes far longer than that, but each chunk comes well within it,
// and the deadline is per chunk, not per snapshot, so the one session installs it all
// without a cut (C's log says it began one install and resumed none). The new device is the responder here, as it is when the peer's session
// reaches it first (the side whose deadline the per-read idle deadline had replaced).
func TestSnapshotFromATricklingPeerOutlivesTheSessionDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: several real devices for seconds (make test runs it)")
	}
	checkGoroutines(t)
	var on atomic.Bool
	var failed atomic.Int64
	on.Store(true)
	a := startNode(t, "dev-a", t.TempDir(), nil, snapshotsOn, func(cfg *nodeSetup) {
		cfg.snapChunkBytes = 8 << 10
		cfg.wrapStream = func(s network.Stream) network.Stream {
			return &tricklingStream{Stream: s, on: &on, failed: &failed}
		}
	})
	a.history(1000, 0, 0) // a few hundred KB of snapshot: several seconds at the trickle's 25 KB/s
	clog := &logBuf{}
	c := startNode(t, "dev-c", t.TempDir(), clog, snapshotsOn, func(cfg *nodeSetup) {
		cfg.sessionTimeout = 2 * time.Second
		// C's own sessions fail at once, so the snapshot comes in A's sessions, where C is
		// the responder.
		cfg.wrapStream = func(s network.Stream) network.Stream {
			if s.Stat().Direction == network.DirOutbound && s.Protocol() != ProtocolPair {
				s.Reset()
			}
			return s
		}
	})
	started := time.Now()
	c.join(a)
	waitSnapshots(t, c, 1)
	if took := time.Since(started); took < 2*time.Second {
		t.Fatalf("the trickled snapshot took %s, within one session deadline: the history is too small for this test", took)
	}
	if logs := clog.String(); strings.Count(logs, "catching up from a snapshot") != 1 || strings.Contains(logs, "resuming a snapshot") {
		t.Fatalf("the trickled snapshot took more than one session:\n%s", logs)
	}
	on.Store(false)
	converged(t, 60*time.Second, a, c)
}

// refusingStore hands its replica's install a malformed chunk (wrong columns) in place of
// the second chunk of rows, once sent is closed: the install refuses the snapshot in the
// middle of the stream.
type refusingStore struct {
	Store
	sent chan struct{}
}

func (s refusingStore) InstallSnapshot(ctx context.Context, next func() (store.SnapshotChunk, error)) (store.SnapshotResult, error) {
	rows := 0
	return s.Store.InstallSnapshot(ctx, func() (store.SnapshotChunk, error) {
		c, err := next()
		if err == nil && c.Table != "" {
			if rows++; rows == 2 {
				select {
				case <-s.sent:
				case <-ctx.Done():
				}
				c.Columns = []string{"x"}
			}
		}
		return c, err
	})
}

// TestRefusedSnapshotEndsItsReader: a snapshot is read off the stream ahead of the install
// (readSnapshot). The install holds its second chunk until the peer has sent the whole
// snapshot, so the reader has read as far ahead as it may and waits to hand on the next
// chunk; then the install refuses the snapshot. The reader stops with the session — no
// goroutine is left — and the new device leaves the install to op replay and ends equal to
// the peer.
func TestRefusedSnapshotEndsItsReader(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two real devices for seconds (make test runs it)")
	}
	checkGoroutines(t)
	a := startNode(t, "dev-a", t.TempDir(), nil, snapshotsOn, func(cfg *nodeSetup) { cfg.snapChunkBytes = 8 << 10 })
	a.history(3000, 0, 0)
	logs := &logBuf{}
	sent := make(chan struct{})
	c := startNode(t, "dev-c", t.TempDir(), logs, snapshotsOn, func(cfg *nodeSetup) { cfg.Store = refusingStore{Store: cfg.Store, sent: sent} })
	c.join(a)
	waitFor(t, 60*time.Second, "A to send its whole snapshot", func() (bool, string) {
		return a.node.stats.SnapshotsServed.Load() > 0, ""
	})
	close(sent)
	converged(t, 120*time.Second, a, c)
	if !strings.Contains(logs.String(), "refused a snapshot") {
		t.Fatalf("C did not refuse the snapshot:\n%s", logs.String())
	}
}

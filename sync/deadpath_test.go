package sync

import (
	"errors"
	"fmt"
	"os"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// deadPaths makes the session streams between chosen pairs of devices go silent without
// closing them, as a cut cable or a dropping firewall does: what is written vanishes and a
// read gets nothing until its deadline (or until the stream is reset or closed locally).
type deadPaths struct {
	mu   stdsync.Mutex
	dead map[[2]peer.ID]bool // {local, remote}
	recv stdsync.Map         // remote peer.ID → *atomic.Int64: bytes read from it
}

func (d *deadPaths) cut(x, y peer.ID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead == nil {
		d.dead = map[[2]peer.ID]bool{}
	}
	d.dead[[2]peer.ID{x, y}] = true
	d.dead[[2]peer.ID{y, x}] = true
}

func (d *deadPaths) isDead(local, remote peer.ID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dead[[2]peer.ID{local, remote}]
}

func (d *deadPaths) received(remote peer.ID) int64 {
	v, _ := d.recv.LoadOrStore(remote, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (d *deadPaths) wrap(s network.Stream) network.Stream {
	v, _ := d.recv.LoadOrStore(s.Conn().RemotePeer(), new(atomic.Int64))
	return &silentStream{Stream: s, paths: d, local: s.Conn().LocalPeer(), remote: s.Conn().RemotePeer(), recv: v.(*atomic.Int64)}
}

type silentStream struct {
	network.Stream
	paths         *deadPaths
	local, remote peer.ID
	recv          *atomic.Int64
}

func (s *silentStream) silent() bool { return s.paths.isDead(s.local, s.remote) }

func (s *silentStream) Read(b []byte) (int, error) {
	for {
		n, err := s.Stream.Read(b)
		if !s.silent() {
			s.recv.Add(int64(n))
			return n, err
		}
		if err != nil {
			// The local deadline, a local reset or close: what a dead path ends with.
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, err
			}
			return 0, fmt.Errorf("silent path: %w", err)
		}
		// Bytes on a dead path never arrive: drop them and keep waiting.
	}
}

func (s *silentStream) Write(b []byte) (int, error) {
	if s.silent() {
		return len(b), nil
	}
	return s.Stream.Write(b)
}

// refuse makes n refuse new connections from and to peers, leaving open ones as they are.
func (n *Node) refuse(peers ...peer.ID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.hooks.cut == nil {
		n.hooks.cut = map[peer.ID]bool{}
	}
	for _, p := range peers {
		n.hooks.cut[p] = true
	}
}

// TestDeadPathMidCatchUpFallsBackToAnotherPeer is issue 12's fifth defect: C is catching up
// 20,000 ops from A when the A–C path goes silent (nothing reset, nothing arrives) while B,
// which holds the same ops, stays reachable. C used to wait on the dead session for 20–32 s;
// it must converge from B within 5 s of the cut.
func TestDeadPathMidCatchUpFallsBackToAnotherPeer(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the 20k-op catch-up runs in the plain (not -short, not -race) test run")
	}
	const total = 20_000
	paths := &deadPaths{}
	// A serves small batches so that the catch-up lasts long enough to be cut in the middle;
	// B and C run as shipped.
	wrap := func(c *nodeSetup) { c.wrapStream = paths.wrap }
	a := startNode(t, "dev-a", t.TempDir(), nil, wrap, func(c *nodeSetup) { c.BatchSize = 100 })
	b := startNode(t, "dev-b", t.TempDir(), nil, wrap)
	b.join(a)
	a.fill(total, 500)
	origin := a.id.String()
	have := a.vv()[origin] // fill may have minted a few identical records: they are one op
	waitFor(t, 2*time.Minute, "B to hold A's ops", func() (bool, string) {
		got := b.vv()[origin]
		return got >= have, fmt.Sprintf("%d of %d", got, have)
	})

	// B goes offline, C starts catching up from A, then B comes back: C now has two paths
	// to A's ops, and its session with A is the one pulling them.
	b.stop()
	c := startNode(t, "dev-c", t.TempDir(), nil, wrap, snapshotsOff) // op replay: a snapshot would arrive whole or not at all
	c.join(a)
	waitFor(t, time.Minute, "C to be pulling from A", func() (bool, string) {
		got := c.vv()[origin]
		return got >= total/20, fmt.Sprint(got)
	})
	b.start(wrap)
	waitFor(t, 30*time.Second, "C to see B alive", func() (bool, string) {
		st := c.deviceState(b)
		return st == StateAlive, st
	})
	atCut := c.vv()[origin]
	if atCut >= have {
		t.Fatalf("C finished the catch-up (%d ops) before the cut: the test did not cut anything", atCut)
	}
	fromA := paths.received(a.id)

	paths.cut(a.id, c.id)
	a.node.refuse(c.id)
	c.node.refuse(a.id)
	began := time.Now()
	// What the dead session had buffered (four prefetched batches of 100 and a 64 KiB read
	// buffer: about 500 ops) may still apply; 1,000 more ops can only have come from B.
	var resumed time.Duration
	waitFor(t, time.Minute, "C to converge with B after the cut", func() (bool, string) {
		got := c.vv()[origin]
		if resumed == 0 && got >= atCut+1000 {
			resumed = time.Since(began)
		}
		return got >= have, fmt.Sprint(got)
	})
	took := time.Since(began)
	t.Logf("cut at %d of %d ops; C was pulling from B again %s after the cut and converged %s after it",
		atCut, have, resumed.Round(time.Millisecond), took.Round(time.Millisecond))
	// The fall-back is the defect (it took 20–32 s); the rest is C's apply rate, which a
	// loaded CI machine slows down. Both are printed; the fall-back is what must hold.
	if resumed > 5*time.Second {
		t.Errorf("C resumed pulling from B %s after the cut, want ≤ 5 s; C's log:\n%s", resumed.Round(time.Millisecond), c.logs)
	}
	if fromA == 0 {
		t.Error("C had read nothing from A before the cut: it was not catching up from A")
	}
}

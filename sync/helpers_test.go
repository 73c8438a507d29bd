package sync

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

// waitFor polls cond until it holds or the deadline passes; msg describes the last state.
func waitFor(tb testing.TB, timeout time.Duration, what string, cond func() (bool, string)) {
	tb.Helper()
	testkit.WaitForState(tb, what, timeout, cond)
}

// checkGoroutines records the goroutine count now and, at cleanup (after every node of the
// test has closed), waits for it to come back down: a leak fails the test.
func checkGoroutines(tb testing.TB) {
	tb.Helper()
	base := runtime.NumGoroutine()
	tb.Cleanup(func() {
		deadline := time.Now().Add(15 * time.Second)
		for {
			n := runtime.NumGoroutine()
			if n <= base {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				tb.Errorf("goroutine leak: %d before, %d after close\n%s", base, n, buf)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// logBuf is a concurrency-safe log sink, for tests that assert what is never logged.
type logBuf struct {
	mu stdsync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testClock is a wall clock a test can move forward.
type testClock struct{ off atomic.Int64 }

func (c *testClock) Now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *testClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// tnode is a device under test: a real replica file plus a real sync node.
type tnode struct {
	tb    testing.TB
	name  string
	dir   string
	rep   *replica.Replica
	bus   *feed.Bus // the replica's change feed, which the sync node subscribes to
	node  *Node
	id    peer.ID
	logs  *logBuf
	clock *testClock
}

// nodeSetup is what a test may change before a node is made: its Config and the test hooks
// (hooks.go), both by their field names.
type nodeSetup struct {
	Config
	*testHooks
}

type nodeOpt func(*nodeSetup)

func startNode(tb testing.TB, name, dir string, logs *logBuf, opts ...nodeOpt) *tnode {
	tb.Helper()
	if logs == nil {
		logs = &logBuf{}
	}
	t := &tnode{tb: tb, name: name, dir: dir, logs: logs, clock: &testClock{}}
	t.start(opts...)
	tb.Cleanup(t.stop)
	return t
}

func (t *tnode) start(opts ...nodeOpt) {
	t.tb.Helper()
	ctx := context.Background()
	_, id, err := LoadOrCreateIdentity(filepath.Join(t.dir, "identity.key"))
	if err != nil {
		t.tb.Fatal(err)
	}
	bus := feed.New()
	path := filepath.Join(t.dir, "memnode.db")
	testkit.PlaceMigrated(t.tb, path) // a restart keeps its database
	rep, err := replica.Open(ctx, replica.Config{Path: path, Origin: id.String(), Feed: bus})
	if err != nil {
		t.tb.Fatal(err)
	}
	cfg := nodeSetup{testHooks: &testHooks{}, Config: Config{
		DataDir: t.dir, DeviceName: t.name, Store: rep, Feed: bus, Version: "test",
		Logger:              slog.New(slog.NewTextHandler(t.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", t.name),
		AntiEntropyInterval: time.Second, Debounce: 20 * time.Millisecond, JoinRetry: 200 * time.Millisecond,
		Now: t.clock.Now,
	}}
	for _, o := range opts {
		o(&cfg)
	}
	n, err := newNode(cfg.Config, cfg.testHooks)
	if err != nil {
		rep.Close()
		t.tb.Fatal(err)
	}
	if err := n.Start(ctx); err != nil {
		n.Close()
		rep.Close()
		t.tb.Fatal(err)
	}
	t.rep, t.bus, t.node, t.id = rep, bus, n, id
}

func (t *tnode) stop() {
	if t.node != nil {
		if err := t.node.Close(); err != nil {
			t.tb.Logf("%s: close: %v", t.name, err)
		}
		t.node = nil
	}
	if t.rep != nil {
		t.rep.Close()
		t.rep = nil
	}
	if t.bus != nil {
		t.bus.Close()
		t.bus = nil
	}
}

func (t *tnode) restart() {
	t.stop()
	t.start()
}

// write commits one observation (and its session); the change feed makes the node push it.
func (t *tnode) write(session, title string) string {
	t.tb.Helper()
	now := time.Now().UnixMilli()
	res, err := t.rep.Commit(context.Background(), &store.Batch{
		Sessions:     []memory.Session{{ID: session, Project: "demo", StartedAt: 1}},
		Observations: []memory.Observation{{SessionID: session, Project: "demo", Type: "discovery", Title: title, Narrative: "narrative of " + title, CreatedAt: now}},
	})
	if err != nil {
		t.tb.Fatal(err)
	}
	if len(res.Observations) != 1 {
		t.tb.Fatalf("write %q: stored %d observations", title, len(res.Observations))
	}
	return res.Observations[0].ID
}

// searchCount counts full-text hits for q in the node's own (locally derived) index.
func (t *tnode) searchCount(q string) int {
	t.tb.Helper()
	var n int
	err := t.rep.ReadDB().QueryRow(`SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH ?`, q).Scan(&n)
	if err != nil {
		t.tb.Fatal(err)
	}
	return n
}

func (t *tnode) dump() string {
	t.tb.Helper()
	d, err := t.rep.CanonicalDump(context.Background())
	if err != nil {
		t.tb.Fatal(err)
	}
	return d
}

// join makes t join inviter's group and waits until both list each other.
func (t *tnode) join(inviter *tnode) {
	t.tb.Helper()
	code, err := inviter.node.Invite(0)
	if err != nil {
		t.tb.Fatal(err)
	}
	if err := t.node.Join(context.Background(), code); err != nil {
		t.tb.Fatalf("%s joins %s: %v", t.name, inviter.name, err)
	}
}

func (t *tnode) status() Status {
	t.tb.Helper()
	st, err := t.node.Status(context.Background())
	if err != nil {
		t.tb.Fatal(err)
	}
	return st
}

func (t *tnode) deviceState(other *tnode) string {
	for _, d := range t.status().Devices {
		if d.PeerID == other.id.String() {
			return d.State
		}
	}
	return "absent"
}

// converged waits until every node's canonical dump is the same.
func converged(tb testing.TB, timeout time.Duration, nodes ...*tnode) {
	tb.Helper()
	waitFor(tb, timeout, "replicas to converge", func() (bool, string) {
		first := nodes[0].dump()
		for _, n := range nodes[1:] {
			if d := n.dump(); d != first {
				return false, n.name + " differs from " + nodes[0].name + ":\n" + first + "\n---\n" + d
			}
		}
		return true, ""
	})
}

func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// setCut partitions n from peers (nil heals): connections are refused and dropped.
func (n *Node) setCut(peers []peer.ID) {
	n.mu.Lock()
	n.hooks.cut = nil
	n.mu.Unlock()
	n.refuse(peers...)
	for _, p := range peers {
		n.host.Network().ClosePeer(p)
	}
}

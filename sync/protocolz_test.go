package sync

import (
	stdsync "sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// protocolLog records the protocol of every session stream a node opens or answers.
type protocolLog struct {
	mu   stdsync.Mutex
	seen map[protocol.ID]int
}

func (l *protocolLog) wrap(s network.Stream) network.Stream {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[protocol.ID]int{}
	}
	l.seen[s.Protocol()]++
	return s
}

func (l *protocolLog) count(p protocol.ID) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[p]
}

// Two current devices sync over the compressed protocol (ProtocolSyncS: compressed, with
// snapshots); a device that speaks only the plain one (an older memnode) still pairs and
// syncs with them both ways.
func TestCompressedSyncAndFallbackToPlain(t *testing.T) {
	checkGoroutines(t)
	var la, lb, lc protocolLog
	a := startNode(t, "dev-a", t.TempDir(), nil, func(c *nodeSetup) { c.wrapStream = la.wrap })
	b := startNode(t, "dev-b", t.TempDir(), nil, func(c *nodeSetup) { c.wrapStream = lb.wrap })
	b.join(a)
	a.write("s1", "compressed hello alpha")
	b.write("s2", "compressed hello bravo")
	converged(t, 20*time.Second, a, b)
	if la.count(ProtocolSyncS) == 0 || lb.count(ProtocolSyncS) == 0 {
		t.Fatalf("current devices did not use %s: a %v, b %v", ProtocolSyncS, la.seen, lb.seen)
	}
	if n := la.count(ProtocolSync) + lb.count(ProtocolSync); n != 0 {
		t.Errorf("current devices fell back to %s %d times", ProtocolSync, n)
	}

	old := startNode(t, "dev-old", t.TempDir(), nil, func(c *nodeSetup) { c.wrapStream = lc.wrap; c.plainOnly = true })
	old.join(a)
	old.write("s3", "plain hello charlie")
	a.write("s4", "compressed hello delta")
	converged(t, 20*time.Second, a, b, old)
	if n := old.searchCount("alpha OR bravo OR delta"); n != 3 {
		t.Errorf("the plain device holds %d of the 3 records the others wrote", n)
	}
	if n := lc.count(ProtocolSyncZ) + lc.count(ProtocolSyncS); n != 0 {
		t.Errorf("the plain-only device used a compressed protocol %d times", n)
	}
	if lc.count(ProtocolSync) == 0 {
		t.Error("the plain-only device never synced")
	}
}

package sync

import (
	"context"
	"errors"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

// Joining one's own code says so; a device that leaves keeps its memory, becomes a group of
// one, and can join another group; the group it left drops it as a removal whose cut keeps
// everything it wrote.
func TestLeaveThenJoinAnotherGroup(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	a := startNode(t, "dev-a", t.TempDir(), nil)
	b := startNode(t, "dev-b", t.TempDir(), nil)
	d := startNode(t, "dev-d", t.TempDir(), nil)
	own, err := b.node.Invite(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.node.Join(ctx, own); !errors.Is(err, ErrOwnInvite) {
		t.Fatalf("joining its own code: %v, want ErrOwnInvite", err)
	}
	if err := b.node.Leave(ctx); !errors.Is(err, ErrNotInGroup) {
		t.Fatalf("leaving a group of one: %v, want ErrNotInGroup", err)
	}
	b.join(a)
	b.write("s1", "written before leaving")
	converged(t, 10*time.Second, a, b)
	oldGroup := b.status().GroupID

	if err := b.node.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	st := b.status()
	if st.GroupID == oldGroup || len(st.Devices) != 1 || !st.Devices[0].Self {
		t.Fatalf("after leaving, B's group: %+v", st)
	}
	waitFor(t, 10*time.Second, "A to count B as removed", func() (bool, string) {
		for _, id := range a.status().Removed {
			if id == b.id.String() {
				return true, ""
			}
		}
		return false, "not yet"
	})
	if a.searchCount(`"leaving"`) != 1 || b.searchCount(`"leaving"`) != 1 {
		t.Fatal("a device that left, or the group it left, lost what it wrote before")
	}
	b.join(d)
	b.write("s2", "written in the new group")
	converged(t, 10*time.Second, b, d)
	if a.searchCount(`"new group"`) != 0 {
		t.Fatal("the group B left got B's later write")
	}
}

// Two devices invite, and each joins the other's code at the same moment: every trial ends
// in one group holding both, and a join that lost says why (never two groups, both "joined").
// Both joins may succeed when one finished before the other arrived: the second device then
// hosts a join into the group it already shares.
func TestCrossJoinEndsInOneGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: several real devices for seconds (make test runs it)")
	}
	checkGoroutines(t)
	ctx := context.Background()
	for trial := range 20 {
		a := startNode(t, "dev-a", t.TempDir(), nil)
		b := startNode(t, "dev-b", t.TempDir(), nil)
		codeA, err := a.node.Invite(0)
		if err != nil {
			t.Fatal(err)
		}
		codeB, err := b.node.Invite(0)
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 2)
		start := make(chan struct{})
		go func() { <-start; errs <- a.node.Join(ctx, codeB) }()
		go func() { <-start; errs <- b.node.Join(ctx, codeA) }()
		close(start)
		e1, e2 := <-errs, <-errs
		for _, err := range []error{e1, e2} {
			if err != nil && !errors.Is(err, ErrCrossJoin) && !errors.Is(err, ErrAlreadyInGroup) {
				t.Fatalf("trial %d: a losing join gave an unclear error: %v", trial, err)
			}
		}
		if e1 != nil && e2 != nil {
			t.Fatalf("trial %d: both joins failed: %v; %v", trial, e1, e2)
		}
		waitFor(t, 10*time.Second, "one group of two", func() (bool, string) {
			sa, sb := a.status(), b.status()
			return sa.GroupID == sb.GroupID && len(sa.Devices) == 2 && len(sb.Devices) == 2,
				sa.GroupID + " vs " + sb.GroupID
		})
		a.stop()
		b.stop()
	}
}

// A join that crosses one into this device keeps the connection the other device joined
// over. Y has checked that it may join X's code when X joins Y's code and Y hosts it (Y has
// the smaller ID); Y's join then goes on. It used to close every connection to X first
// ("start clean"), which could reset X's join mid-handshake ("connection reset by peer").
func TestJoinKeepsTheConnectionOfADeviceJoiningIt(t *testing.T) {
	checkGoroutines(t)
	ctx := context.Background()
	var xID atomic.Value // peer.ID of X, set before any Join
	checked, xDone := make(chan struct{}), make(chan struct{})
	release := stdsync.OnceFunc(func() { close(xDone) }) // lets Y's Join go on
	hook := func(c *nodeSetup) {
		c.joinChecked = func(inviter peer.ID) {
			if id, _ := xID.Load().(peer.ID); inviter == id {
				close(checked)
				<-xDone
			}
		}
	}
	a := startNode(t, "dev-a", t.TempDir(), nil, hook)
	b := startNode(t, "dev-b", t.TempDir(), nil, hook)
	defer a.stop()
	defer b.stop()
	defer release() // before the stops, which wait for Y's Join
	x, y := a, b
	if x.id.String() < y.id.String() {
		x, y = b, a // Y hosts X's join while joining only with the smaller ID
	}
	xID.Store(x.id)
	codeX, err := x.node.Invite(0)
	if err != nil {
		t.Fatal(err)
	}
	codeY, err := y.node.Invite(0)
	if err != nil {
		t.Fatal(err)
	}
	yErr := make(chan error, 1)
	go func() { yErr <- y.node.Join(ctx, codeX) }()
	<-checked
	if err := x.node.Join(ctx, codeY); err != nil {
		t.Fatalf("X joining Y while Y is about to dial: %v", err)
	}
	var joinedOver []string
	for _, c := range y.node.host.Network().ConnsToPeer(x.id) {
		joinedOver = append(joinedOver, c.ID())
	}
	if len(joinedOver) == 0 {
		t.Fatal("Y holds no connection to X after hosting its join")
	}
	release()
	if err := <-yErr; err != nil && !errors.Is(err, ErrCrossJoin) && !errors.Is(err, ErrAlreadyInGroup) {
		t.Fatalf("Y's join after hosting X's: %v", err)
	}
	open := map[string]bool{}
	for _, c := range y.node.host.Network().ConnsToPeer(x.id) {
		open[c.ID()] = true
	}
	for _, id := range joinedOver {
		if !open[id] {
			t.Errorf("Y's join closed the connection %s that X had joined over", id)
		}
	}
	waitFor(t, 10*time.Second, "one group of two", func() (bool, string) {
		sx, sy := x.status(), y.status()
		return sx.GroupID == sy.GroupID && len(sx.Devices) == 2 && len(sy.Devices) == 2, sx.GroupID + " vs " + sy.GroupID
	})
}

package sync

import (
	"context"
	"testing"
	"time"
)

// A peer that goes silent in the middle of a session (a dead path: nothing is reset, nothing
// arrives) is dropped at the idle deadline, not held for the 2-minute session deadline.
func TestStalledSessionEndsAtTheIdleDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: several real devices for seconds (make test runs it)")
	}
	checkGoroutines(t)
	ctx := context.Background()
	a := startNode(t, "dev-a", t.TempDir(), nil)
	b := startNode(t, "dev-b", t.TempDir(), nil)
	b.join(a)
	a.write("s1", "before the stall")
	converged(t, 10*time.Second, a, b)

	// B opens a session by hand: Hello, read A's Hello, then silence where its Want belongs.
	s, err := b.node.host.NewStream(ctx, a.id, ProtocolSync)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Reset()
	c := b.node.newConn(s)
	h, err := b.node.hello(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.send(h); err != nil {
		t.Fatal(err)
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	if m, _, err := readMessage(c.r); err != nil || m.Type != msgHello {
		t.Fatalf("A's hello: %v %v", m, err)
	}
	began := time.Now()
	_ = s.SetReadDeadline(time.Now().Add(sessionTimeout))
	if m, _, err := readMessage(c.r); err == nil {
		t.Fatalf("A sent message %d to a peer that never asked for anything", m.Type)
	}
	took := time.Since(began)
	if took >= sessionTimeout/2 {
		t.Fatalf("A held the silent session for %s (idle deadline %s)", took, sessionIdle)
	}
	t.Logf("A dropped the silent session after %s (idle deadline %s)", took.Round(time.Millisecond), sessionIdle)
}

package sync

import (
	"testing"
	"time"
)

// TestCrashedDeviceIsNoticed: a device that vanishes without leaving (a crash, a pulled
// cable) is declared dead by the others through SWIM probes. The time it took is logged,
// not asserted (the deadline only bounds the test): the tuning aims at about a second.
func TestCrashedDeviceIsNoticed(t *testing.T) {
	checkGoroutines(t)
	a := startNode(t, "a", t.TempDir(), nil)
	b := startNode(t, "b", t.TempDir(), nil)
	b.join(a)
	waitFor(t, 10*time.Second, "a to see b alive", func() (bool, string) {
		s := a.deviceState(b)
		return s == StateAlive, s
	})
	// Crash b: its gossip socket and libp2p host disappear without a leave message.
	start := time.Now()
	b.node.hooks.gossipDown.Store(true)
	if err := b.node.ml.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := b.node.host.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 15*time.Second, "a to declare the crashed b dead", func() (bool, string) {
		s := a.deviceState(b)
		return s == StateDead, s
	})
	t.Logf("crash noticed after %s", time.Since(start).Round(time.Millisecond))
}

package sync

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/network"
	ma "github.com/multiformats/go-multiaddr"
)

// A TCP dial leaves from an ephemeral port, never from the port the device listens on. With
// SO_REUSEPORT, two devices dialing each other at the same moment (crossing joins, both sides
// starting a sync) get one TCP connection by simultaneous open, both run the noise handshake
// as initiator, and the dial fails ("noise: message is too short"): TestCrossJoinEndsInOneGroup
// failed so about once in 600 trials.
func TestTCPDialsLeaveFromAnEphemeralPort(t *testing.T) {
	checkGoroutines(t)
	a := startNode(t, "dev-a", t.TempDir(), nil)
	b := startNode(t, "dev-b", t.TempDir(), nil)
	defer a.stop()
	defer b.stop()
	b.join(a)

	listening := map[string]bool{}
	for _, addr := range b.node.host.Network().ListenAddresses() {
		if port, err := addr.ValueForProtocol(ma.P_TCP); err == nil {
			listening[port] = true
		}
	}
	if len(listening) == 0 {
		t.Fatal("B listens on no TCP port")
	}
	var outbound int
	for _, c := range b.node.host.Network().ConnsToPeer(a.id) {
		port, err := c.LocalMultiaddr().ValueForProtocol(ma.P_TCP)
		if err != nil || c.Stat().Direction != network.DirOutbound {
			continue
		}
		outbound++
		if listening[port] {
			t.Errorf("B dialed A from its listening port %s (%s)", port, c.LocalMultiaddr())
		}
	}
	if outbound == 0 {
		t.Fatal("B holds no outbound TCP connection to A after joining A's code")
	}
}

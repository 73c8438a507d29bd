package sync

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/p2p/discovery/mdns"
)

// mdnsNotifee connects to members found on the LAN; strangers are ignored (and would be
// refused by the gater anyway).
type mdnsNotifee struct{ n *Node }

func (m mdnsNotifee) HandlePeerFound(ai peer.AddrInfo) {
	n := m.n
	if ai.ID == n.self || !n.group().isMember(ai.ID.String()) {
		return
	}
	n.host.Peerstore().AddAddrs(ai.ID, ai.Addrs, peerstore.TempAddrTTL)
	kick(n.stateKick)
}

func (n *Node) startMDNS() error {
	// The service name is derived from the group ID without revealing it, so devices of
	// other groups on the LAN neither learn it nor answer.
	g := n.group()
	sum := sha256.Sum256([]byte("memnode/mdns/" + g.GroupID))
	svc := mdns.NewMdnsService(n.host, "_mn-"+hex.EncodeToString(sum[:6])+"._udp", mdnsNotifee{n})
	if err := svc.Start(); err != nil {
		return fmt.Errorf("start mdns: %w", err)
	}
	n.mdns = svc
	return nil
}

package sync

import (
	"slices"

	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// gater admits only group members, plus — while an invite is pending — unknown peers for the
// pairing protocol (the stream handlers enforce which protocol each may use).
type gater struct{ n *Node }

func (g gater) InterceptPeerDial(p peer.ID) bool { return g.n.admit(p, true) }
func (g gater) InterceptAddrDial(peer.ID, ma.Multiaddr) bool {
	return true
}
func (g gater) InterceptAccept(network.ConnMultiaddrs) bool { return true }
func (g gater) InterceptSecured(dir network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return g.n.admit(p, dir == network.DirOutbound)
}
func (g gater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

func (n *Node) admit(p peer.ID, outbound bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	id := p.String()
	if n.hooks.cut[p] {
		return false
	}
	if _, gone := n.state.Group.Removed[id]; gone {
		// A removed device may connect only to be told so: its sync stream gets one Error
		// and the connection is closed (handleSync); pairing refuses it; we never dial it.
		return !outbound
	}
	if n.state.Group.isMember(id) {
		return true
	}
	if outbound {
		return p == n.pairTarget
	}
	return n.pendingInvitesLocked() > 0
}

func (n *Node) pendingInvitesLocked() int {
	now := n.cfg.Now()
	n.invites = slices.DeleteFunc(n.invites, func(i pendingInvite) bool { return !now.Before(i.expires) })
	return len(n.invites)
}

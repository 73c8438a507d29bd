package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// removedText is the Error a member answers a removed device with, so that device can say
// in Status that it was removed instead of retrying forever.
const removedText = "removed: this device was removed from the group"

// busyText is the Error an inviter answers a crossing join with (see handlePair).
const busyText = "busy: this device is joining another group"

// Errors of removal and leaving.
var (
	// ErrRemoved: a member told this device it was removed from the group.
	ErrRemoved = errors.New("this device was removed from its group: run 'memnode peers leave', then join another group")
	// ErrNotInGroup: Leave on a device that shares no group with others.
	ErrNotInGroup = errors.New("this device is not in a group with other devices")
	// ErrCrossJoin: the two devices joined each other's codes at the same moment; one
	// join wins (see handlePair), this one did not.
	ErrCrossJoin = errors.New("the other device is joining a group at the same moment: its join decides; check 'memnode peers' and join from one device only")
	// ErrOwnInvite: Join with a code this device created.
	ErrOwnInvite = errors.New("this invite code was created on this device: run 'memnode peers join CODE' on the other device")
)

// tellRemoved answers a removed device's sync stream with removedText and drops the
// connection; nothing of the stream is read, nothing else is sent.
func (n *Node) tellRemoved(s network.Stream, p peer.ID) {
	_ = s.SetDeadline(time.Now().Add(2 * time.Second))
	c := n.newConn(s)
	if c.send(&message{Type: msgError, Text: removedText}) == nil && c.flush() == nil {
		_ = s.CloseWrite()
		_, _ = io.Copy(io.Discard, io.LimitReader(s, 64<<10)) // let the message drain
	}
	s.Reset()
	n.host.Network().ClosePeer(p)
	n.log.Info("told a removed device it was removed", "peer", shortID(p))
}

// markRemoved records that member p told us we were removed. Only a device this device still
// counts as a member is believed.
func (n *Node) markRemoved(p peer.ID) {
	n.mu.Lock()
	if n.state.RemovedBy != "" || !n.state.Group.isMember(p.String()) {
		n.mu.Unlock()
		return
	}
	n.state.RemovedBy = p.String()
	name := n.state.Group.Members[p.String()].Name
	n.mu.Unlock()
	n.log.Warn("this device was removed from its group; 'memnode peers leave' starts a new group of one", "told_by", name)
	if err := n.persist(); err != nil {
		n.log.Error("save group state", "err", err)
	}
}

// Leave takes this device out of its group for good and starts a new group of one, which
// can then join another. A device still in the group first tells the live members (its
// removal, with a cut-off that keeps everything it wrote); a device that was removed only
// forgets the old group.
func (n *Node) Leave(ctx context.Context) error {
	if err := n.running(); err != nil {
		return err
	}
	vv, err := n.cfg.Store.VersionVector(ctx)
	if err != nil {
		return fmt.Errorf("leave: %w", err)
	}
	self := n.self.String()
	n.mu.Lock()
	removed := n.state.RemovedBy != ""
	if len(n.state.Group.Members) <= 1 && !removed {
		n.mu.Unlock()
		return ErrNotInGroup
	}
	var others []peer.ID
	for id := range n.state.Group.Members {
		if p, err := peer.Decode(id); err == nil && p != n.self {
			others = append(others, p)
		}
	}
	if !removed {
		n.state.Group.Removed[self] = n.cfg.Now().UnixMilli()
		n.state.Group.Cuts[self] = max(n.state.Group.Cuts[self], vv[self])
		delete(n.state.Group.Members, self)
	}
	n.mu.Unlock()
	if !removed {
		if err := n.persist(); err != nil {
			return fmt.Errorf("leave: %w", err)
		}
		// One Hello to each member carries our own removal; members merge it as any removal.
		// Best effort: a member that is offline learns it from the others.
		for _, p := range others {
			sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if err := n.announce(sctx, p); err != nil {
				n.log.Debug("leave: announce", "peer", shortID(p), "err", err)
			}
			cancel()
		}
	}
	g, err := newGroup(Member{PeerID: self, Name: n.cfg.DeviceName, Version: n.cfg.Version, Updated: n.cfg.Now().UnixMilli()})
	if err != nil {
		return fmt.Errorf("leave: %w", err)
	}
	n.mu.Lock()
	n.state = stateFile{Group: g, PublishedName: n.state.PublishedName, GossipPort: n.state.GossipPort}
	n.refreshSelfLocked()
	n.mu.Unlock()
	if err := n.persist(); err != nil {
		return fmt.Errorf("leave: %w", err)
	}
	if err := n.syncKeyring(); err != nil {
		return fmt.Errorf("leave: %w", err)
	}
	for _, p := range others {
		n.host.Network().ClosePeer(p)
		n.host.Peerstore().ClearAddrs(p)
	}
	n.log.Info("left the group; this device is now a group of one")
	return nil
}

// announce sends p our Hello (our group state) and reads p's, without exchanging ops.
func (n *Node) announce(ctx context.Context, p peer.ID) error {
	s, err := n.host.NewStream(network.WithAllowLimitedConn(ctx, "sync"), p, n.syncProtocols()...)
	if err != nil {
		return fmt.Errorf("open sync stream: %w", err)
	}
	defer s.Reset() // the peer sees the session end after its Hello: no ops move
	if d, ok := ctx.Deadline(); ok {
		_ = s.SetDeadline(d)
	}
	c := n.newConn(s)
	h, err := n.hello(ctx)
	if err != nil {
		return err
	}
	if err := c.send(h); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	_, err = c.expect(msgHello)
	return err
}

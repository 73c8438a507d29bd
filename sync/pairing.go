package sync

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// Invite limits.
const (
	DefaultInviteTTL = 10 * time.Minute
	MaxInviteTTL     = 24 * time.Hour
	nonceLen         = 32
)

// Invite creates a single-use invite code valid for ttl (DefaultInviteTTL if zero). The code
// lives only in this process's memory and in what the caller shows the person; it is never
// logged or written to disk.
func (n *Node) Invite(ttl time.Duration) (string, error) {
	if ttl <= 0 {
		ttl = DefaultInviteTTL
	}
	if ttl > MaxInviteTTL {
		return "", fmt.Errorf("invite: ttl %s is longer than %s", ttl, MaxInviteTTL)
	}
	if err := n.running(); err != nil {
		return "", err
	}
	addr := dialableAddr(n.host.Addrs())
	if addr == nil {
		return "", errors.New("invite: the node has no listen address")
	}
	c := inviteCode{Expires: n.cfg.Now().Add(ttl).Truncate(time.Second), Inviter: n.self, Addr: addr}
	if _, err := rand.Read(c.Secret[:]); err != nil {
		return "", fmt.Errorf("invite: %w", err)
	}
	n.mu.Lock()
	n.invites = append(n.invites, pendingInvite{secret: c.Secret, expires: c.Expires})
	n.mu.Unlock()
	n.log.Info("invite created", "expires", c.Expires.Format(time.RFC3339))
	return c.String(), nil
}

// dialableAddr picks the address to put in a code: TCP over QUIC (firewalls), and a
// non-loopback address when there is one.
func dialableAddr(addrs []ma.Multiaddr) ma.Multiaddr {
	var best ma.Multiaddr
	score := -1
	for _, a := range addrs {
		s := 0
		if _, err := a.ValueForProtocol(ma.P_TCP); err == nil {
			s += 2
		}
		if v, err := a.ValueForProtocol(ma.P_IP4); err == nil && !strings.HasPrefix(v, "127.") {
			s++
		}
		if s > score {
			best, score = a, s
		}
	}
	return best
}

func (n *Node) running() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.closed:
		return ErrClosed
	case !n.started || n.host == nil || n.ml == nil:
		return ErrNotStarted
	}
	return nil
}

// Join uses an invite code from another device: it proves possession of the code's secret
// (which never leaves this device), adopts the inviter's group and starts syncing with it.
func (n *Node) Join(ctx context.Context, code string) error {
	c, err := parseInvite(code)
	if err != nil {
		return err
	}
	if !n.cfg.Now().Before(c.Expires) {
		return ErrInviteExpired
	}
	if err := n.running(); err != nil {
		return err
	}
	if c.Inviter == n.self {
		return ErrOwnInvite
	}
	n.mu.Lock()
	if n.hosting > 0 {
		n.mu.Unlock()
		return ErrCrossJoin // a device is joining us right now: its join decides the group
	}
	if len(n.state.Group.Members) > 1 {
		n.mu.Unlock()
		return ErrAlreadyInGroup
	}
	n.pairTarget = c.Inviter
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		n.pairTarget = ""
		n.mu.Unlock()
	}()

	if n.hooks.joinChecked != nil {
		n.hooks.joinChecked(c.Inviter)
	}

	ctx, cancel := context.WithTimeout(ctx, pairTimeout)
	defer cancel()
	// Start clean: a connection or addresses left from an earlier attempt may belong to a
	// moment when the inviter had no invite open, and would be refused. Not while the
	// inviter may be using its connection to us: while we have an invite open (it may be
	// joining us at this moment: crossing joins), or once it counts as a member (its join
	// used our invite and is finishing, or its sessions run on the connection). Closing it
	// would fail its join, or reset its sessions, for no reason. A join into our group that
	// is neither needs an invite and cannot start after this check.
	n.mu.Lock()
	inUse := n.pendingInvitesLocked() > 0 || n.state.Group.isMember(c.Inviter.String())
	n.mu.Unlock()
	if !inUse {
		n.host.Network().ClosePeer(c.Inviter)
	}
	n.host.Peerstore().ClearAddrs(c.Inviter)
	if err := n.connectInviter(ctx, c.Inviter, c.Addr); err != nil {
		return err
	}
	s, err := n.host.NewStream(ctx, c.Inviter, ProtocolPair)
	if err != nil {
		if n.hostingJoin() {
			return ErrCrossJoin
		}
		return fmt.Errorf("join: %w (%v)", ErrInviterUnreachable, err)
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { s.Reset() })
	defer stop()
	_ = s.SetDeadline(time.Now().Add(pairTimeout))

	g, err := n.pairAsJoiner(ctx, n.newConn(s), c)
	if err != nil {
		s.Reset()
		return err
	}
	n.mu.Lock()
	before := n.state.Group.clone()
	g.Members[n.self.String()] = newestMember(g.Members[n.self.String()], before.Members[n.self.String()])
	n.state.Group = g
	n.state.RemoteVV, n.state.LastSync = nil, nil
	after := n.state.Group.clone()
	n.mu.Unlock()
	if err := n.applyGroupChange(before, after); err != nil {
		return fmt.Errorf("join: %w", err)
	}
	n.log.Info("joined group", "members", len(after.Members))
	return nil
}

func newestMember(a, b Member) Member {
	if newerMember(a, b) {
		return a
	}
	return b
}

func (n *Node) pairAsJoiner(ctx context.Context, c *conn, code inviteCode) (groupState, error) {
	nonceJ := make([]byte, nonceLen)
	if _, err := rand.Read(nonceJ); err != nil {
		return groupState{}, err
	}
	n.mu.Lock()
	me, _ := json.Marshal(n.state.Group.Members[n.self.String()])
	n.mu.Unlock()
	if err := c.send(&message{Type: msgPairHello, Nonce: nonceJ, Member: me}); err != nil {
		return groupState{}, err
	}
	if err := c.flush(); err != nil {
		return groupState{}, err
	}
	ch, err := c.expect(msgChallenge)
	if err != nil {
		return groupState{}, rejected(err)
	}
	if len(ch.Nonce) != nonceLen {
		return groupState{}, ErrInviteRejected
	}
	proof := pairMAC(code.Secret[:], "joiner", ch.Nonce, nonceJ, code.Inviter, n.self)
	if err := c.send(&message{Type: msgProof, MAC: proof}); err != nil {
		return groupState{}, err
	}
	if err := c.flush(); err != nil {
		return groupState{}, err
	}
	w, err := c.expect(msgWelcome)
	if err != nil {
		return groupState{}, rejected(err)
	}
	// The inviter proves it knew the secret too: a device that merely learned the code's
	// address cannot impersonate the group (Noise already pins its peer ID).
	if !hmac.Equal(w.MAC, pairMAC(code.Secret[:], "inviter", nonceJ, ch.Nonce, code.Inviter, n.self)) {
		return groupState{}, ErrInviteRejected
	}
	var g groupState
	if err := json.Unmarshal(w.Group, &g); err != nil || len(g.Key) != 32 || g.GroupID == "" {
		return groupState{}, fmt.Errorf("join: welcome: %w", ErrMalformed)
	}
	g = g.clone()
	if !g.isMember(n.self.String()) || !g.isMember(code.Inviter.String()) {
		return groupState{}, fmt.Errorf("join: welcome does not list both devices: %w", ErrProtocol)
	}
	return g, nil
}

func rejected(err error) error {
	if errors.Is(err, ErrProtocol) {
		return ErrInviteRejected
	}
	return fmt.Errorf("join: %w", err)
}

// handlePair is the inviter's side of pairing. It answers only while an invite is pending,
// and closes the connection of any peer that fails.
func (n *Node) handlePair(s network.Stream) {
	if !n.enter() {
		s.Reset()
		return
	}
	defer n.wg.Done()
	p := s.Conn().RemotePeer()
	refuse := func(reason string) {
		n.log.Warn("pairing refused", "peer", shortID(p), "reason", reason)
		s.Reset()
		if !n.group().isMember(p.String()) {
			n.host.Network().ClosePeer(p)
		}
	}
	n.mu.Lock()
	_, removed := n.state.Group.Removed[p.String()]
	pending := n.pendingInvitesLocked()
	// Two joins that cross (each device joins the other's code): exactly one may win, or
	// the two devices would each adopt the other's group. While joining, a device hosts a
	// joiner only if its own peer ID is the smaller; the other device refuses (busy), so its
	// join fails and the group is the smaller ID's. Hosting blocks a Join from starting.
	crossing := n.pairTarget != "" && n.self.String() > p.String()
	if !removed && pending > 0 && !crossing {
		n.hosting++
		defer func() {
			n.mu.Lock()
			n.hosting--
			n.mu.Unlock()
		}()
	}
	n.mu.Unlock()
	if removed || pending == 0 {
		refuse("no pending invite")
		return
	}
	if crossing {
		n.log.Info("pairing refused: this device is joining another group right now", "peer", shortID(p))
		_ = s.SetDeadline(time.Now().Add(2 * time.Second))
		c := n.newConn(s)
		_ = c.send(&message{Type: msgError, Text: busyText})
		_ = c.flush()
		_ = s.CloseWrite()
		_, _ = io.Copy(io.Discard, io.LimitReader(s, 1<<10))
		s.Reset()
		return
	}
	_ = s.SetDeadline(time.Now().Add(pairTimeout))
	c := n.newConn(s)
	hello, err := c.expect(msgPairHello)
	if err != nil || len(hello.Nonce) != nonceLen {
		refuse("bad hello")
		return
	}
	var joiner Member
	if err := json.Unmarshal(hello.Member, &joiner); err != nil || joiner.PeerID != p.String() || len(joiner.Name) > 256 {
		refuse("bad member record")
		return
	}
	nonceI := make([]byte, nonceLen)
	if _, err := rand.Read(nonceI); err != nil {
		refuse("no randomness")
		return
	}
	if c.send(&message{Type: msgChallenge, Nonce: nonceI}) != nil || c.flush() != nil {
		refuse("write failed")
		return
	}
	proof, err := c.expect(msgProof)
	if err != nil {
		refuse("no proof")
		return
	}
	n.mu.Lock()
	n.pendingInvitesLocked()
	var secret []byte
	for i, inv := range n.invites {
		if hmac.Equal(proof.MAC, pairMAC(inv.secret[:], "joiner", nonceI, hello.Nonce, n.self, p)) {
			secret = append([]byte(nil), inv.secret[:]...)
			n.invites = append(n.invites[:i], n.invites[i+1:]...) // single use
			break
		}
	}
	if secret == nil {
		n.mu.Unlock()
		n.log.Warn("pairing refused", "peer", shortID(p), "reason", "wrong, expired or used code")
		// Tell the joiner why, let the message drain, then drop the stranger's connection.
		_ = c.send(&message{Type: msgError, Text: "invite refused"})
		_ = c.flush()
		_ = s.CloseWrite()
		_ = s.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, _ = io.Copy(io.Discard, io.LimitReader(s, 1<<10))
		s.Reset()
		n.host.Network().ClosePeer(p)
		return
	}
	before := n.state.Group.clone()
	joiner.Updated = max(joiner.Updated, n.cfg.Now().UnixMilli())
	n.state.Group.Members[joiner.PeerID] = joiner
	after := n.state.Group.clone()
	n.mu.Unlock()
	if err := n.applyGroupChange(before, after); err != nil {
		refuse("save group")
		return
	}
	gb, _ := json.Marshal(after)
	mac := pairMAC(secret, "inviter", hello.Nonce, nonceI, n.self, p)
	if c.send(&message{Type: msgWelcome, MAC: mac, Group: gb}) != nil || c.flush() != nil {
		s.Reset()
		return
	}
	s.Close()
	n.log.Info("device paired", "peer", shortID(p), "name", joiner.Name)
}

// Remove revokes a device for good: it is refused on every connection from now on, its
// record is dropped, and the gossip key rotates so it cannot read later gossip. device is a
// peer ID, a unique suffix of one (the short ID), or a unique device name.
func (n *Node) Remove(ctx context.Context, device string) (Member, error) {
	if err := n.running(); err != nil {
		return Member{}, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return Member{}, fmt.Errorf("remove: %w", err)
	}
	vv, err := n.cfg.Store.VersionVector(ctx)
	if err != nil {
		return Member{}, fmt.Errorf("remove: %w", err)
	}
	n.mu.Lock()
	m, err := resolveMember(n.state.Group, device)
	if err != nil {
		n.mu.Unlock()
		return Member{}, err
	}
	if m.PeerID == n.self.String() {
		n.mu.Unlock()
		return Member{}, ErrRemoveSelf
	}
	before := n.state.Group.clone()
	n.state.Group.Removed[m.PeerID] = n.cfg.Now().UnixMilli()
	// The cut-off: every op of the device this member holds stays, everything later is
	// dropped by every member (a concurrent removal that knew more raises it: max).
	n.state.Group.Cuts[m.PeerID] = max(n.state.Group.Cuts[m.PeerID], vv[m.PeerID])
	delete(n.state.Group.Members, m.PeerID)
	n.state.Group.KeyEpoch++
	n.state.Group.Key = key
	after := n.state.Group.clone()
	n.mu.Unlock()
	if err := n.applyGroupChange(before, after); err != nil {
		return Member{}, fmt.Errorf("remove: %w", err)
	}
	return m, nil
}

func resolveMember(g groupState, device string) (Member, error) {
	if m, ok := g.Members[device]; ok {
		return m, nil
	}
	var found []Member
	for id, m := range g.Members {
		if (len(device) >= 6 && strings.HasSuffix(id, device)) || strings.EqualFold(m.Name, device) {
			found = append(found, m)
		}
	}
	switch len(found) {
	case 0:
		return Member{}, fmt.Errorf("%q: %w", device, ErrUnknownPeer)
	case 1:
		return found[0], nil
	}
	return Member{}, fmt.Errorf("%q matches %d devices: %w", device, len(found), ErrAmbiguousDevice)
}

// dialAttempts bounds connectInviter's tries; dialBackoff is the pause before the second.
const (
	dialAttempts = 3
	dialBackoff  = 100 * time.Millisecond
)

// connectInviter dials the inviting device. A failed dial is tried again after a short pause
// (a listener that was busy, a connection closed under us), and a device that meanwhile
// hosts the other's join answers ErrCrossJoin, whose join then decides the group. Two devices
// that join each other's codes at the same moment dial each other at once: that needs dials
// from ephemeral ports (see the TCP transport's options in Start), or the two dials become
// one simultaneous-open connection whose handshake fails on both sides.
func (n *Node) connectInviter(ctx context.Context, inviter peer.ID, addr ma.Multiaddr) error {
	var err error
	for attempt := range dialAttempts {
		if attempt > 0 {
			t := time.NewTimer(time.Duration(attempt) * dialBackoff)
			select {
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("join: %w (%v)", ErrInviterUnreachable, err)
			case <-t.C:
			}
			if n.hostingJoin() {
				return ErrCrossJoin
			}
		}
		// A retry bypasses the swarm's dial backoff, which would refuse it outright.
		dctx := ctx
		if attempt > 0 {
			dctx = network.WithForceDirectDial(ctx, "join retry")
		}
		if err = n.host.Connect(dctx, peer.AddrInfo{ID: inviter, Addrs: []ma.Multiaddr{addr}}); err == nil {
			return nil
		}
	}
	if n.hostingJoin() {
		return ErrCrossJoin
	}
	return fmt.Errorf("join: %w (%v)", ErrInviterUnreachable, err)
}

// hostingJoin reports whether another device is joining this one right now.
func (n *Node) hostingJoin() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hosting > 0
}

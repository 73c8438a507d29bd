package sync

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"maps"
	"strings"
	stdsync "sync"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	ma "github.com/multiformats/go-multiaddr"
)

// nodeMeta is what each node gossips about itself (memberlist caps it at 512 bytes).
type nodeMeta struct {
	PeerID  string   `json:"p"`
	Addrs   []string `json:"a,omitempty"`
	Name    string   `json:"n,omitempty"`
	Version string   `json:"v,omitempty"`
}

func (n *Node) encodeMeta() []byte {
	m := nodeMeta{PeerID: n.self.String(), Name: n.cfg.DeviceName, Version: n.cfg.Version}
	for _, a := range n.host.Addrs() {
		m.Addrs = append(m.Addrs, a.String())
		if b, _ := json.Marshal(m); len(b) > memberlist.MetaMaxSize {
			m.Addrs = m.Addrs[:len(m.Addrs)-1]
			break
		}
	}
	for len(m.Name) > 64 {
		m.Name = m.Name[:64]
	}
	b, _ := json.Marshal(m)
	return b
}

// startMemberlist creates the gossip member with the group key. It is tuned so that a dead
// device on a LAN is declared dead in about one second (see DESIGN.md, "Membership").
func (n *Node) startMemberlist() error {
	g := n.group()
	keyring, err := memberlist.NewKeyring(nil, g.Key)
	if err != nil {
		return fmt.Errorf("start gossip: %w", err)
	}
	n.keys = keyring
	meta := n.encodeMeta()

	mk := func(port int) *memberlist.Config {
		c := memberlist.DefaultLANConfig()
		c.Name = n.self.String()
		c.BindAddr = n.cfg.GossipBindAddr
		c.BindPort = port
		c.AdvertisePort = port
		c.Keyring = keyring
		c.GossipVerifyIncoming = true
		c.GossipVerifyOutgoing = true
		c.ProbeInterval = 200 * time.Millisecond
		c.ProbeTimeout = 100 * time.Millisecond
		c.SuspicionMult = 2
		c.SuspicionMaxTimeoutMult = 3
		c.GossipInterval = 50 * time.Millisecond
		c.GossipToTheDeadTime = 5 * time.Second
		c.PushPullInterval = 10 * time.Second
		c.TCPTimeout = 2 * time.Second
		c.IndirectChecks = 2
		c.Delegate = metaDelegate{meta: meta}
		c.Events = eventDelegate{kick: n.memberKick, metas: n.metas}
		c.Logger = log.New(slogWriter{n.log.With("component", "memberlist")}, "", 0)
		return c
	}
	port := n.cfg.GossipPort
	if port == 0 {
		port = n.state.GossipPort
	}
	ml, err := memberlist.Create(mk(port))
	if err != nil && n.cfg.GossipPort == 0 && port != 0 {
		ml, err = memberlist.Create(mk(0)) // the old port is taken: any port will do
	}
	if err != nil {
		return fmt.Errorf("start gossip: %w", err)
	}
	n.ml = ml
	return nil
}

// useKey makes key the only gossip key: after a removal, nothing encrypted with the old key
// is sent or accepted any more.
func (n *Node) useKey(key []byte) error {
	if err := n.keys.AddKey(key); err != nil {
		return fmt.Errorf("install gossip key: %w", err)
	}
	if err := n.keys.UseKey(key); err != nil {
		return fmt.Errorf("install gossip key: %w", err)
	}
	for _, k := range n.keys.GetKeys() {
		if !bytes.Equal(k, key) {
			if err := n.keys.RemoveKey(k); err != nil {
				return fmt.Errorf("drop gossip key: %w", err)
			}
		}
	}
	return nil
}

// metaDelegate only answers NodeMeta; group state travels over libp2p, not gossip.
type metaDelegate struct{ meta []byte }

func (d metaDelegate) NodeMeta(limit int) []byte {
	if len(d.meta) > limit {
		return nil
	}
	return d.meta
}
func (metaDelegate) NotifyMsg([]byte)                           {}
func (metaDelegate) GetBroadcasts(overhead, limit int) [][]byte { return nil }
func (metaDelegate) LocalState(join bool) []byte                { return nil }
func (metaDelegate) MergeRemoteState(buf []byte, join bool)     {}

// eventDelegate is called on memberlist's own goroutines, with memberlist's node lock held:
// it copies the node's name and metadata (memberlist rewrites a *Node's Meta in place later,
// so reading it from Members() on another goroutine races) and signals the node's loop.
type eventDelegate struct {
	kick  chan struct{}
	metas *liveMetas
}

func (e eventDelegate) NotifyJoin(nd *memberlist.Node)   { e.metas.set(nd.Name, nd.Meta); kick(e.kick) }
func (e eventDelegate) NotifyUpdate(nd *memberlist.Node) { e.metas.set(nd.Name, nd.Meta); kick(e.kick) }
func (e eventDelegate) NotifyLeave(nd *memberlist.Node)  { e.metas.drop(nd.Name); kick(e.kick) }

// liveMetas is the metadata of the nodes memberlist counts as alive, by node name.
type liveMetas struct {
	mu stdsync.Mutex
	m  map[string][]byte
}

func (l *liveMetas) set(name string, meta []byte) {
	l.mu.Lock()
	l.m[name] = bytes.Clone(meta)
	l.mu.Unlock()
}

func (l *liveMetas) drop(name string) {
	l.mu.Lock()
	delete(l.m, name)
	l.mu.Unlock()
}

func (l *liveMetas) snapshot() map[string][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.m)
}

// refreshMembers reads memberlist's view, feeds gossiped addresses to the peerstore and starts
// a session with every member that has just come alive (anti-entropy on connect).
func (n *Node) refreshMembers(ctx context.Context) {
	g := n.group()
	now := map[peer.ID]bool{}
	for name, raw := range n.metas.snapshot() {
		var meta nodeMeta
		if err := json.Unmarshal(raw, &meta); err != nil {
			continue
		}
		p, err := peer.Decode(meta.PeerID)
		if err != nil || p == n.self || name != meta.PeerID || !g.isMember(meta.PeerID) {
			continue
		}
		var addrs []ma.Multiaddr
		for _, s := range meta.Addrs {
			if a, err := ma.NewMultiaddr(s); err == nil {
				addrs = append(addrs, a)
			}
		}
		n.host.Peerstore().AddAddrs(p, addrs, peerstore.PermanentAddrTTL)
		now[p] = true
	}
	n.mu.Lock()
	var fresh, dead []peer.ID
	for p := range now {
		if !n.alive[p] {
			fresh = append(fresh, p)
		}
	}
	for p := range n.alive {
		if !now[p] {
			dead = append(dead, p)
		}
	}
	n.alive = now
	n.mu.Unlock()
	for _, p := range dead {
		n.dropSessions(p)
	}
	if len(dead) > 0 {
		n.NotifyLocalWrite() // what the dead peer was sending, a live one sends now
	}
	for _, p := range fresh {
		n.startSession(ctx, p)
	}
}

// joinLoop (re)joins the gossip of members it does not see: after a restart, a partition or
// a join, this is what reconnects the group. Joining by known addresses always works, with or
// without mDNS.
func (n *Node) joinLoop(ctx context.Context) {
	defer n.wg.Done()
	t := time.NewTicker(n.cfg.JoinRetry)
	defer t.Stop()
	for {
		g := n.group()
		seen := map[string]bool{}
		for _, nd := range n.ml.Members() {
			seen[nd.Name] = true
		}
		var addrs []string
		for id, m := range g.Members {
			if id != n.self.String() && !seen[id] && m.Gossip != "" {
				addrs = append(addrs, m.Gossip)
			}
		}
		if len(addrs) > 0 {
			if k, err := n.ml.Join(addrs); err != nil && k == 0 {
				n.log.Debug("gossip join failed", "tried", len(addrs), "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// slogWriter turns memberlist's log lines into slog records at the matching level.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	s := strings.TrimSpace(string(p))
	// memberlist's errors are about peers (a laptop closed, a removed device still knocking
	// with the old key every few seconds): routine for a device group, so one level down.
	lvl := slog.LevelDebug
	if strings.Contains(s, "[ERR]") {
		lvl = slog.LevelInfo
	}
	w.l.Log(context.Background(), lvl, s)
	return len(p), nil
}

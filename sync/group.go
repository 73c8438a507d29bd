package sync

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	stdsync "sync"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/memnode/memnode/store"
)

// Member is one device of the group, as the group state records it.
type Member struct {
	PeerID  string   `json:"peer_id"`
	Name    string   `json:"name"`
	Addrs   []string `json:"addrs,omitempty"`  // libp2p multiaddrs
	Gossip  string   `json:"gossip,omitempty"` // memberlist host:port
	Version string   `json:"version,omitempty"`
	// Updated (epoch ms, written by the member itself or by its inviter) orders concurrent
	// versions of the record: the newer wins, ties broken by the encoded record.
	Updated int64 `json:"updated"`
}

// groupState is what every member agrees on. It is a state-based CRDT (see DESIGN.md,
// "Group state"): members merge by union with LWW per member, removals are a grow-only set
// that beats membership, and the gossip key is a register ordered by (epoch, key bytes).
type groupState struct {
	GroupID  string            `json:"group_id"`
	KeyEpoch uint64            `json:"key_epoch"`
	Key      []byte            `json:"key"` // memberlist AES-256 key
	Members  map[string]Member `json:"members"`
	Removed  map[string]int64  `json:"removed,omitempty"` // peer ID → removal time (ms)
	// Cuts holds, per removed peer ID, the last of its ops any member may keep: the remover's
	// version vector entry at the removal. Merged by max (see DESIGN.md, "Removal is final").
	Cuts map[string]uint64 `json:"cuts,omitempty"`
}

// ErrOtherGroup reports a peer that belongs to a different group.
var ErrOtherGroup = errors.New("peer belongs to another group")

func newGroup(self Member) (groupState, error) {
	id := make([]byte, 16)
	key := make([]byte, 32)
	if _, err := rand.Read(id); err != nil {
		return groupState{}, fmt.Errorf("new group: %w", err)
	}
	if _, err := rand.Read(key); err != nil {
		return groupState{}, fmt.Errorf("new group: %w", err)
	}
	return groupState{
		GroupID: hex.EncodeToString(id), KeyEpoch: 1, Key: key,
		Members: map[string]Member{self.PeerID: self}, Removed: map[string]int64{}, Cuts: map[string]uint64{},
	}, nil
}

func (g groupState) clone() groupState {
	c := g
	c.Key = slices.Clone(g.Key)
	c.Members = maps.Clone(g.Members)
	c.Removed = maps.Clone(g.Removed)
	if c.Members == nil {
		c.Members = map[string]Member{}
	}
	if c.Removed == nil {
		c.Removed = map[string]int64{}
	}
	c.Cuts = maps.Clone(g.Cuts)
	if c.Cuts == nil {
		c.Cuts = map[string]uint64{}
	}
	return c
}

// isMember reports whether id may talk to us: listed and never removed.
func (g groupState) isMember(id string) bool {
	if _, gone := g.Removed[id]; gone {
		return false
	}
	_, ok := g.Members[id]
	return ok
}

// merge folds other into g and reports whether g changed. Merge is commutative, associative
// and idempotent, so members converge whatever order states travel in.
func (g *groupState) merge(other groupState) (bool, error) {
	if other.GroupID != g.GroupID {
		return false, ErrOtherGroup
	}
	changed := false
	if other.KeyEpoch > g.KeyEpoch || (other.KeyEpoch == g.KeyEpoch && bytes.Compare(other.Key, g.Key) > 0) {
		if len(other.Key) != 32 {
			return false, fmt.Errorf("merge group: key of %d bytes: %w", len(other.Key), ErrMalformed)
		}
		g.KeyEpoch, g.Key = other.KeyEpoch, slices.Clone(other.Key)
		changed = true
	}
	for id, at := range other.Removed {
		if cur, ok := g.Removed[id]; !ok || at < cur {
			g.Removed[id] = at
			changed = true
		}
	}
	for id, seq := range other.Cuts {
		if cur, ok := g.Cuts[id]; !ok || seq > cur {
			g.Cuts[id] = seq
			changed = true
		}
	}
	for id, m := range other.Members {
		if _, gone := g.Removed[id]; gone || m.PeerID != id {
			continue
		}
		cur, ok := g.Members[id]
		if !ok || newerMember(m, cur) {
			g.Members[id] = m
			changed = true
		}
	}
	for id := range g.Removed {
		if _, ok := g.Members[id]; ok {
			delete(g.Members, id)
			changed = true
		}
	}
	return changed, nil
}

func newerMember(a, b Member) bool {
	if a.Updated != b.Updated {
		return a.Updated > b.Updated
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Compare(ja, jb) > 0
}

// stateFile is what DataDir/group.json holds.
type stateFile struct {
	Group groupState `json:"group"`
	// PublishedName is the device name last written to the replica, so a restart with the
	// same name does not append a device op.
	PublishedName string `json:"published_name,omitempty"`
	// GossipPort is reused on restart so the other members find us where they last saw us.
	GossipPort int `json:"gossip_port,omitempty"`
	// RemoteVV caches the last version vector each peer announced (for "ops behind").
	RemoteVV map[string]store.VersionVector `json:"remote_vv,omitempty"`
	LastSync map[string]int64               `json:"last_sync,omitempty"`
	// RemovedBy is the member that told this device it was removed (empty while it is not).
	RemovedBy string `json:"removed_by,omitempty"`
}

func loadState(path string) (stateFile, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return stateFile{}, false, nil
	}
	if err != nil {
		return stateFile{}, false, fmt.Errorf("load group state: %w", err)
	}
	var s stateFile
	if err := json.Unmarshal(b, &s); err != nil {
		return stateFile{}, false, fmt.Errorf("load group state %s: %w", path, err)
	}
	s.Group = s.Group.clone()
	return s, true, nil
}

func saveState(path string, s stateFile) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("save group state: %w", err)
	}
	if err := writeFileAtomic(path, b); err != nil {
		return fmt.Errorf("save group state: %w", err)
	}
	return nil
}

func sortedOrigins(vv store.VersionVector) []string {
	return slices.Sorted(maps.Keys(vv))
}

// snapshotLocked deep-copies the state so persist can save it outside n.mu.
func (n *Node) snapshotLocked() stateFile {
	st := n.state
	st.Group = st.Group.clone()
	st.RemoteVV = make(map[string]store.VersionVector, len(n.state.RemoteVV))
	for k, v := range n.state.RemoteVV {
		st.RemoteVV[k] = maps.Clone(v)
	}
	st.LastSync = maps.Clone(n.state.LastSync)
	return st
}

// membership is the group side of a node's state: the group state file and what was last
// written to it, the gossip (memberlist) and who it sees alive, pending invites and the
// pairing in progress. state, invites, pairTarget, hosting and alive are guarded by Node.mu.
type membership struct {
	path       string        // group.json
	saveMu     stdsync.Mutex // serialises persist and syncKeyring, which run outside mu
	state      stateFile
	invites    []pendingInvite
	pairTarget peer.ID
	hosting    int // pairings this device is answering as the inviter now
	alive      map[peer.ID]bool
	metas      *liveMetas // what memberlist's event delegate copied (safe to read any time)

	ml   *memberlist.Memberlist
	keys *memberlist.Keyring
	mdns interface{ Close() error }

	memberKick chan struct{} // memberlist saw a join, update or leave
	stateKick  chan struct{} // the group state changed: learn addresses, run a full round
}

func (n *Node) group() groupState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state.Group.clone()
}

func (n *Node) publishName(ctx context.Context) error {
	n.mu.Lock()
	name, published := n.cfg.DeviceName, n.state.PublishedName
	n.mu.Unlock()
	if name == "" || name == published {
		return nil
	}
	if err := n.cfg.Store.SetDeviceName(ctx, n.self.String(), name); err != nil {
		return fmt.Errorf("publish device name: %w", err)
	}
	n.mu.Lock()
	n.state.PublishedName = name
	n.mu.Unlock()
	return n.persist()
}

// refreshSelfLocked brings this device's own member record up to date.
func (n *Node) refreshSelfLocked() {
	me := Member{PeerID: n.self.String(), Name: n.cfg.DeviceName, Version: n.cfg.Version}
	for _, a := range n.host.Addrs() {
		me.Addrs = append(me.Addrs, a.String())
	}
	if n.ml != nil {
		me.Gossip = n.ml.LocalNode().Address()
	}
	cur := n.state.Group.Members[me.PeerID]
	if cur.Name == me.Name && cur.Gossip == me.Gossip && cur.Version == me.Version && slices.Equal(cur.Addrs, me.Addrs) {
		return
	}
	me.Updated = max(n.cfg.Now().UnixMilli(), cur.Updated+1)
	n.state.Group.Members[me.PeerID] = me
}

// learnAddrs puts every member's known addresses into the peerstore.
func (n *Node) learnAddrs(g groupState) {
	for id, m := range g.Members {
		p, err := peer.Decode(id)
		if err != nil || p == n.self {
			continue
		}
		var addrs []ma.Multiaddr
		for _, s := range m.Addrs {
			if a, err := ma.NewMultiaddr(s); err == nil {
				addrs = append(addrs, a)
			}
		}
		n.host.Peerstore().AddAddrs(p, addrs, peerstore.PermanentAddrTTL)
	}
}

// mergeGroup folds a peer's group state into ours, persists it, and applies its effects:
// a new gossip key, dropped connections to removed devices, addresses of new members.
func (n *Node) mergeGroup(other groupState) error {
	n.mu.Lock()
	before := n.state.Group.clone()
	changed, err := n.state.Group.merge(other)
	if err != nil || !changed {
		n.mu.Unlock()
		return err
	}
	after := n.state.Group.clone()
	n.mu.Unlock()
	return n.applyGroupChange(before, after)
}

// applyGroupChange persists the state and applies the effects of the group going from
// before to g (both copies taken under n.mu).
func (n *Node) applyGroupChange(before, g groupState) error {
	if err := n.persist(); err != nil {
		return err
	}
	if g.KeyEpoch != before.KeyEpoch || string(g.Key) != string(before.Key) {
		if err := n.syncKeyring(); err != nil {
			return err
		}
		n.log.Info("gossip key rotated", "epoch", g.KeyEpoch)
	}
	n.applyCuts(before, g)
	if g.KeyEpoch != before.KeyEpoch || len(g.Removed) != len(before.Removed) {
		n.preemptSessions() // a running session must not go on under the old state
	}
	for id := range g.Removed {
		if _, was := before.Removed[id]; was {
			continue
		}
		if p, err := peer.Decode(id); err == nil {
			n.host.Network().ClosePeer(p)
			n.host.Peerstore().ClearAddrs(p)
		}
		n.log.Info("device removed from group", "peer", id)
	}
	for id := range g.Members {
		if _, was := before.Members[id]; !was {
			n.log.Info("device joined group", "peer", id, "name", g.Members[id].Name)
		}
	}
	n.learnAddrs(g)
	kick(n.stateKick)
	return nil
}

// applyCuts hands the replica every removal cut-off that is new or higher in g than in
// before. Start calls it with an empty before, so a cut the state file holds but the replica
// missed (a crash between the two) is applied at the next start.
func (n *Node) applyCuts(before, g groupState) {
	for id, seq := range g.Cuts {
		if cur, ok := before.Cuts[id]; ok && cur >= seq {
			continue
		}
		if id == n.self.String() {
			continue // our own removal: Status says so; our op-log stays ours
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		dropped, err := n.cfg.Store.CutOrigin(ctx, id, seq)
		cancel()
		if err != nil {
			n.log.Error("drop a removed device's later ops", "peer", id, "err", err)
			continue
		}
		if dropped > 0 {
			n.log.Info("dropped a removed device's ops past its removal", "peer", id, "ops", dropped, "cut", seq)
		}
	}
}

// persist writes the current state. Concurrent callers are serialised and each writes the
// state as of its turn, so the file never goes back to an older state.
func (n *Node) persist() error {
	n.saveMu.Lock()
	defer n.saveMu.Unlock()
	n.mu.Lock()
	st := n.snapshotLocked()
	n.mu.Unlock()
	return saveState(n.path, st)
}

// syncKeyring makes the gossip keyring hold exactly the current group key. Reading the key
// at its turn (not the caller's copy) means two concurrent rotations end on the latest key.
func (n *Node) syncKeyring() error {
	n.saveMu.Lock()
	defer n.saveMu.Unlock()
	n.mu.Lock()
	key := slices.Clone(n.state.Group.Key)
	n.mu.Unlock()
	return n.useKey(key)
}

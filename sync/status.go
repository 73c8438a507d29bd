package sync

import (
	"context"
	"sort"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/replica"
)

// Device states as `memnode peers` shows them.
const (
	StateAlive   = "alive"
	StateSuspect = "suspect"
	StateDead    = "dead"
)

// PeerStatus describes one device of the group.
type PeerStatus struct {
	Name     string     `json:"name"`
	PeerID   string     `json:"peer_id"`
	ShortID  string     `json:"short_id"`
	Addrs    []string   `json:"addrs"`
	State    string     `json:"state"`
	Self     bool       `json:"self,omitempty"`
	Version  string     `json:"version,omitempty"`
	LastSync *time.Time `json:"last_sync,omitempty"`
	// Behind counts ops this device has that the peer lacked when they last spoke;
	// Ahead counts ops the peer had that this device still lacks.
	Behind uint64 `json:"ops_behind"`
	Ahead  uint64 `json:"ops_ahead"`
	// Error is the cause of the latest session when several in a row reached the peer and
	// failed (a record the peer refuses, a protocol error); empty while sync works.
	Error string `json:"error,omitempty"`
}

// Status is the group as this device sees it.
type Status struct {
	GroupID        string       `json:"group_id"`
	KeyEpoch       uint64       `json:"key_epoch"`
	Devices        []PeerStatus `json:"devices"`
	Removed        []string     `json:"removed,omitempty"`
	PendingInvites int          `json:"pending_invites"`
	// RemovedBy names the member that told this device it was removed from the group; the
	// device no longer syncs until 'memnode peers leave' gives it a group of its own.
	RemovedBy string `json:"removed_by,omitempty"`
}

// Status reports every device of the group: self first, then by name.
func (n *Node) Status(ctx context.Context) (Status, error) {
	if err := n.running(); err != nil {
		return Status{}, err
	}
	vv, err := n.cfg.Store.VersionVector(ctx)
	if err != nil {
		return Status{}, err
	}
	states := map[string]string{}
	for _, nd := range n.ml.Members() {
		switch nd.State {
		case memberlist.StateAlive:
			states[nd.Name] = StateAlive
		case memberlist.StateSuspect:
			states[nd.Name] = StateSuspect
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	g := n.state.Group
	st := Status{GroupID: g.GroupID, KeyEpoch: g.KeyEpoch, PendingInvites: n.pendingInvitesLocked()}
	if by := n.state.RemovedBy; by != "" {
		st.RemovedBy = g.Members[by].Name
		if st.RemovedBy == "" {
			st.RemovedBy = shortIDString(by)
		}
	}
	for id, m := range g.Members {
		ps := PeerStatus{Name: m.Name, PeerID: id, ShortID: shortIDString(id), Addrs: m.Addrs, Version: m.Version, State: StateDead}
		if s, ok := states[id]; ok {
			ps.State = s
		}
		if id == n.self.String() {
			ps.Self, ps.State = true, StateAlive
		} else {
			if at, ok := n.state.LastSync[id]; ok {
				t := time.UnixMilli(at)
				ps.LastSync = &t
			}
			ps.Behind, ps.Ahead = diffVV(vv, n.state.RemoteVV[id])
			if p, err := peer.Decode(id); err == nil {
				if pr := n.peers[p]; pr != nil && pr.fails >= failWarn {
					ps.Error = pr.lastErr
				}
			}
		}
		st.Devices = append(st.Devices, ps)
	}
	sort.Slice(st.Devices, func(i, j int) bool {
		a, b := st.Devices[i], st.Devices[j]
		if a.Self != b.Self {
			return a.Self
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.PeerID < b.PeerID
	})
	for id := range g.Removed {
		st.Removed = append(st.Removed, id)
	}
	sort.Strings(st.Removed)
	return st, nil
}

// diffVV returns how many ops mine has beyond theirs, and theirs beyond mine.
func diffVV(mine, theirs replica.VersionVector) (behind, ahead uint64) {
	for o, s := range mine {
		if t := theirs[o]; s > t {
			behind += s - t
		}
	}
	for o, t := range theirs {
		if s := mine[o]; t > s {
			ahead += t - s
		}
	}
	return behind, ahead
}

func shortIDString(s string) string {
	if len(s) > 12 {
		return s[len(s)-12:]
	}
	return s
}

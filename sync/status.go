package sync

import (
	"context"
	"maps"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/store"
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
	// Compared is false until the peer has announced its version vector (its first
	// session): Behind and Ahead are then unknown, not 0.
	Compared bool `json:"compared"`
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
	// OpsHeld counts the ops this device holds; OpsKnown the ops it knows exist: its own
	// and those its peers announced that it still lacks. OpsHeld < OpsKnown while it
	// catches up (a new device, a long time offline), and the gap shrinks as ops arrive.
	OpsHeld  uint64 `json:"ops_held"`
	OpsKnown uint64 `json:"ops_known"`
	// Snapshot is the snapshot this device is installing, while it is: its rows come in
	// chunk by chunk, but its ops count only once the whole snapshot is in.
	Snapshot *SnapshotStatus `json:"snapshot,omitempty"`
}

// SnapshotStatus is how far a snapshot install is: rows installed of the rows the snapshot
// carries (as its sender counted them).
type SnapshotStatus struct {
	Rows  int64 `json:"rows"`
	Total int64 `json:"total"`
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
	prog, err := n.cfg.Store.SnapshotProgress(ctx)
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
	if prog.Active {
		st.Snapshot = &SnapshotStatus{Rows: prog.Rows, Total: prog.Total}
	}
	var remotes []store.VersionVector
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
			theirs, ok := n.state.RemoteVV[id]
			ps.Behind, ps.Ahead = diffVV(vv, theirs)
			ps.Compared = ok
			if ok {
				remotes = append(remotes, theirs)
			}
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
	st.OpsHeld, st.OpsKnown = catchUp(vv, remotes)
	for id := range g.Removed {
		st.Removed = append(st.Removed, id)
	}
	sort.Strings(st.Removed)
	return st, nil
}

// catchUp returns how many ops mine holds, and how many exist as far as mine and the
// peers' announced vectors tell (per origin, the highest sequence any of them has).
func catchUp(mine store.VersionVector, remotes []store.VersionVector) (held, known uint64) {
	top := maps.Clone(mine)
	if top == nil {
		top = store.VersionVector{}
	}
	for _, r := range remotes {
		for o, s := range r {
			top[o] = max(top[o], s)
		}
	}
	for _, s := range mine {
		held += s
	}
	for _, s := range top {
		known += s
	}
	return held, known
}

// diffVV returns how many ops mine has beyond theirs, and theirs beyond mine.
func diffVV(mine, theirs store.VersionVector) (behind, ahead uint64) {
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

// Summary is the group in one line, as `memnode status` and the session-start health notice
// show it: removed, not paired yet, or how many devices are alive, the catch-up still to do
// and every peer in error (each "; error with NAME: …").
func (s Status) Summary() string {
	if s.RemovedBy != "" {
		return "removed from its group (told by " + s.RemovedBy + "); 'memnode peers leave' starts a new group"
	}
	if len(s.Devices) <= 1 {
		return "on, not paired yet ('memnode peers invite' on this device, 'memnode peers join CODE' on another)"
	}
	alive := 0
	for _, d := range s.Devices {
		if d.State == StateAlive {
			alive++
		}
	}
	line := strconv.Itoa(len(s.Devices)) + " devices, " + strconv.Itoa(alive) + " alive ('memnode peers' for details)"
	if s.OpsKnown > s.OpsHeld {
		line += "; catching up: " + strconv.FormatUint(s.OpsHeld, 10) + " of " + strconv.FormatUint(s.OpsKnown, 10) + " ops here"
	}
	if sn := s.Snapshot; sn != nil {
		line += "; snapshot: " + strconv.FormatInt(sn.Rows, 10) + " of " + strconv.FormatInt(sn.Total, 10) + " rows installed"
	}
	for _, d := range s.Devices {
		if d.Error != "" {
			line += "; error with " + d.Name + ": " + d.Error
		}
	}
	return line
}

// Stats counts sync traffic since Start.
type Stats struct {
	Sessions   atomic.Int64
	OpsSent    atomic.Int64
	OpsApplied atomic.Int64
	BytesSent  atomic.Int64
	BytesRecv  atomic.Int64
	// SnapshotsInstalled counts snapshots this device started from, SnapshotOps the op-log
	// rows they brought, SnapshotsServed the snapshots it sent.
	SnapshotsInstalled atomic.Int64
	SnapshotOps        atomic.Int64
	SnapshotsServed    atomic.Int64
}

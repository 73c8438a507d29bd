package sync

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// A new device starts from a snapshot instead of replaying every op (DESIGN.md,
// "Snapshots"): an initiator that holds nothing of any other device asks a peer that speaks
// ProtocolSyncS and holds at least Config.SnapshotMin ops with SnapWant instead of Want; the
// peer streams its replicated rows and op-log (SnapRows…) and the vector they belong to
// (SnapEnd); the initiator installs them in one transaction and then pulls what lies past
// that vector with an ordinary Want, in the same session.

// errSnapshotFailed marks a pull whose snapshot failed: the stream is left mid-snapshot, so
// the session ends there (even for a refused stamp, which an op batch survives).
var errSnapshotFailed = errors.New("snapshot failed")

// snapshotClaim is a pull's hold on every origin of the peer while a snapshot installs.
type snapshotClaim struct {
	*pullClaim
	origins []string
}

// claimSnapshot decides whether this pull starts with a snapshot: the stream speaks
// ProtocolSyncS, snapshots are on, the peer holds at least SnapshotMin ops of other
// devices, this replica is blank, no snapshot from this peer was refused, and no other
// session is pulling anything (a blank device already replaying stays on replay). If so it
// claims every origin of the peer, under the same lock as the check, so no other session
// pulls them (or asks for another snapshot) meanwhile.
func (n *Node) claimSnapshot(ctx context.Context, c *conn, mine, theirs store.VersionVector) *snapshotClaim {
	if !c.snap || n.cfg.SnapshotMin < 0 {
		return nil
	}
	self := n.self.String()
	total := 0
	for o, s := range theirs {
		if o != self {
			total += int(min(s, 1<<40))
		}
	}
	if total < n.cfg.SnapshotMin {
		return nil
	}
	for o, s := range mine {
		if o != self && s > 0 {
			return nil
		}
	}
	if blank, err := n.cfg.Store.IsBlank(ctx); err != nil || !blank {
		return nil
	}
	p := c.s.Conn().RemotePeer()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.snapRefused[p] || len(n.pulling) > 0 {
		return nil
	}
	claim := &snapshotClaim{pullClaim: newPullClaim()}
	claim.snapshot = true
	for o := range theirs {
		n.pulling[o] = claim.pullClaim
		claim.origins = append(claim.origins, o)
	}
	return claim
}

// pullSnapshot asks the peer for its snapshot and installs it; it returns this replica's
// vector afterwards. A snapshot this device refuses (a stamp beyond the clock bound, a
// malformed one) is not asked of that peer again: the next session replays its ops.
func (n *Node) pullSnapshot(ctx context.Context, c *conn, claim *snapshotClaim) (store.VersionVector, error) {
	defer func() {
		n.mu.Lock()
		for _, o := range claim.origins {
			if n.pulling[o] == claim.pullClaim {
				delete(n.pulling, o)
			}
		}
		n.mu.Unlock()
	}()
	n.log.Info("catching up from a snapshot", "peer", shortID(c.s.Conn().RemotePeer()))
	if err := c.send(&message{Type: msgSnapWant}); err != nil {
		return nil, err
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	p := c.s.Conn().RemotePeer()
	res, err := n.cfg.Store.InstallSnapshot(ctx, func() (store.SnapshotChunk, error) {
		if err := ctx.Err(); err != nil {
			return store.SnapshotChunk{}, err // the session is over: the install rolls back and frees the writer
		}
		m, err := c.recv()
		claim.touch()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			kick(n.stallKick) // the path may be dead: a round with the other members takes over
		}
		if err != nil {
			return store.SnapshotChunk{}, err
		}
		switch m.Type {
		case msgSnapRows:
			return store.SnapshotChunk{Table: m.Table, Columns: m.Columns, Rows: m.Rows}, nil
		case msgSnapEnd:
			return store.SnapshotChunk{VV: m.VV}, nil
		}
		return store.SnapshotChunk{}, fmt.Errorf("got message %d during a snapshot: %w", m.Type, ErrProtocol)
	})
	if errors.Is(err, memory.ErrClockAhead) || errors.Is(err, store.ErrBadSnapshot) {
		n.mu.Lock()
		if n.snapRefused == nil {
			n.snapRefused = map[peer.ID]bool{}
		}
		n.snapRefused[p] = true
		n.mu.Unlock()
		n.log.Warn("refused a snapshot; catching up by op replay", "peer", shortID(p), "err", err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w from %s: %w", errSnapshotFailed, shortID(p), err)
	}
	n.stats.SnapshotsInstalled.Add(1)
	n.stats.SnapshotOps.Add(int64(res.Ops))
	n.log.Info("started from a snapshot", "peer", shortID(p), "records", res.Records, "ops", res.Ops)
	return n.cfg.Store.VersionVector(ctx)
}

// serveSnapshot streams this replica's snapshot: SnapRows messages of at most
// opsMessageSoft bytes each (or one larger row), flushed one by one so every write makes
// progress within sessionIdle, then SnapEnd with the vector.
func (n *Node) serveSnapshot(ctx context.Context, c *conn) error {
	err := n.cfg.Store.Snapshot(ctx, opsMessageSoft, func(ch store.SnapshotChunk) error {
		m := &message{Type: msgSnapRows, Table: ch.Table, Columns: ch.Columns, Rows: ch.Rows}
		if ch.Table == "" {
			m = &message{Type: msgSnapEnd, VV: ch.VV}
		}
		if err := c.send(m); err != nil {
			return err
		}
		return c.flush()
	})
	if err != nil {
		return fmt.Errorf("serve snapshot: %w", err)
	}
	n.stats.SnapshotsServed.Add(1)
	return nil
}

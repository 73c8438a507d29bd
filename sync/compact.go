package sync

import (
	"context"
	"fmt"
	"maps"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/store"
)

// compactFloor is, per origin, the highest seq every member of the group is known to hold:
// the minimum of this replica's vector and of the last vector each other member announced
// in a Hello (announcements only lag, so the floor is never above what a member holds). A
// member that has announced nothing yet (a device that just joined) holds nothing as far as
// we know: then there is no floor and nothing is compacted. Removed devices are not members
// and do not count.
func (n *Node) compactFloor(ctx context.Context) (store.VersionVector, error) {
	mine, err := n.cfg.Store.VersionVector(ctx)
	if err != nil {
		return nil, fmt.Errorf("compaction floor: %w", err)
	}
	g := n.group()
	n.mu.Lock()
	defer n.mu.Unlock()
	floor := maps.Clone(mine) // nil when this replica holds nothing: nothing to compact
	for id := range g.Members {
		if p, err := peer.Decode(id); err != nil || p == n.self {
			continue
		}
		theirs, ok := n.state.RemoteVV[id]
		if !ok {
			return nil, nil
		}
		for o, s := range floor {
			floor[o] = min(s, theirs[o])
		}
	}
	return floor, nil
}

// Compact compacts the replica's op-log up to the floor every member has passed
// (replica.Compact; sync/DESIGN.md "Compaction"). The node's loop runs it in the
// background every CompactInterval; it is exported for tests and tools that want it now.
func (n *Node) Compact(ctx context.Context) (store.CompactResult, error) {
	floor, err := n.compactFloor(ctx)
	if err != nil || floor == nil {
		return store.CompactResult{}, err
	}
	res, err := n.cfg.Store.Compact(ctx, floor)
	if err != nil {
		return res, err
	}
	if res.Removed() > 0 {
		n.log.Info("op-log compacted", "superseded", res.Superseded, "forgotten", res.Forgotten)
	}
	return res, nil
}

// compactSoon runs Compact on a goroutine of the node unless one is running, so the loop
// never waits for the writer.
func (n *Node) compactSoon(ctx context.Context) {
	if !n.compacting.CompareAndSwap(false, true) {
		return
	}
	if !n.enter() {
		n.compacting.Store(false)
		return
	}
	go func() {
		defer n.wg.Done()
		defer n.compacting.Store(false)
		if _, err := n.Compact(ctx); err != nil && ctx.Err() == nil {
			n.log.Warn("op-log compaction failed", "err", err)
		}
	}()
}

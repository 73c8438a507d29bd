package sync

import (
	"context"
	"errors"
	"fmt"
	"os"
	stdsync "sync"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// A new device starts from a snapshot instead of replaying every op (DESIGN.md,
// "Snapshots"): an initiator that holds nothing of any other device asks a peer that speaks
// ProtocolSyncS and holds at least Config.SnapshotMin ops with SnapWant instead of Want; the
// peer streams the vector it is at and its row count (SnapBegin), its replicated rows and
// op-log in key order (SnapRows…) and the vector again (SnapEnd); the initiator commits
// every chunk as it comes, with the cursor after it, and then pulls what lies past the
// vector with an ordinary Want, in the same session. A cut (a lost connection, a restart)
// keeps what was committed: the next session's SnapWant names the cursor, and any member
// that speaks snapshots goes on from there.

// errSnapshotFailed marks a pull whose snapshot failed: the stream is left mid-snapshot, so
// the session ends there (even for a refused stamp, which an op batch survives).
var errSnapshotFailed = errors.New("snapshot failed")

// snapshotClaim is a pull's hold on every origin of the peer while a snapshot installs.
type snapshotClaim struct {
	*pullClaim
	origins []string
}

// claimSnapshot decides whether this pull starts (or resumes) a snapshot. An install that
// began goes on with any peer whose stream speaks ProtocolSyncS, unless another session is
// installing; a peer that cannot go on with it (snapshots off, its snapshot refused, a
// device of an older version) leaves it to op replay (AbandonSnapshot: the rows stay, op
// replay completes them). A new install needs the stream to speak ProtocolSyncS, snapshots
// on, the peer to hold at least SnapshotMin ops of other devices, this replica blank, no
// snapshot from this peer refused, and no other session pulling anything (a blank device
// already replaying stays on replay). If so it claims every origin of the peer, under the
// same lock as the check, so no other session pulls them (or asks for another snapshot)
// meanwhile.
func (n *Node) claimSnapshot(ctx context.Context, c *conn, mine, theirs store.VersionVector) *snapshotClaim {
	p := c.s.Conn().RemotePeer()
	prog, err := n.cfg.Store.SnapshotProgress(ctx)
	if err != nil {
		return nil
	}
	if prog.Active {
		n.mu.Lock()
		refused, busy := n.snapRefused[p], n.installingLocked()
		n.mu.Unlock()
		if busy {
			return nil
		}
		if !c.snap || n.cfg.SnapshotMin < 0 || refused {
			if err := n.cfg.Store.AbandonSnapshot(ctx); err != nil {
				n.log.Warn("could not leave a snapshot install to op replay", "err", err)
				return nil
			}
			n.log.Info("snapshot install left to op replay", "peer", shortID(p), "rows", prog.Rows, "of", prog.Total)
			return nil
		}
		return n.claimAll(theirs, func() bool { return !n.installingLocked() })
	}
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
	return n.claimAll(theirs, func() bool { return !n.snapRefused[p] && len(n.pulling) == 0 })
}

// installingLocked reports whether a session is installing a snapshot. n.mu is held.
func (n *Node) installingLocked() bool {
	for _, cl := range n.pulling {
		if cl.snapshot {
			return true
		}
	}
	return false
}

// claimAll claims every origin of theirs for a snapshot if ok, checked under n.mu, holds.
func (n *Node) claimAll(theirs store.VersionVector, ok func() bool) *snapshotClaim {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !ok() {
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

// pullSnapshot asks the peer for its snapshot from where this device's install stands and
// installs it chunk by chunk; it returns this replica's vector afterwards. Each chunk
// pushes the session's deadline on, so a snapshot that keeps coming is never cut by it. A
// snapshot this device refuses (a stamp beyond the clock bound, a malformed one) is not
// asked of that peer again: the install is left to op replay.
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
	p := c.s.Conn().RemotePeer()
	prog, err := n.cfg.Store.SnapshotProgress(ctx)
	if err != nil {
		return nil, err
	}
	if prog.Active {
		n.log.Info("resuming a snapshot", "peer", shortID(p), "rows", prog.Rows, "of", prog.Total)
	} else {
		n.log.Info("catching up from a snapshot", "peer", shortID(p))
	}
	if err := c.send(&message{Type: msgSnapWant, From: prog.From}); err != nil {
		return nil, err
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	chunks, stop := n.readSnapshot(ctx, c, claim)
	res, err := n.cfg.Store.InstallSnapshot(ctx, func() (store.SnapshotChunk, error) {
		if err := ctx.Err(); err != nil {
			return store.SnapshotChunk{}, err // the session is over: what was committed stays
		}
		c.dl.extend() // the previous chunk is in: a deadline per chunk, not per snapshot
		r, ok := <-chunks
		if !ok {
			return store.SnapshotChunk{}, fmt.Errorf("snapshot stream ended: %w", ErrProtocol)
		}
		return r.chunk, r.err
	})
	stop(err != nil)
	n.stats.SnapshotOps.Add(int64(res.Ops))
	if errors.Is(err, memory.ErrClockAhead) || errors.Is(err, store.ErrBadSnapshot) {
		n.mu.Lock()
		if n.snapRefused == nil {
			n.snapRefused = map[peer.ID]bool{}
		}
		n.snapRefused[p] = true
		n.mu.Unlock()
		n.log.Warn("refused a snapshot; catching up by op replay", "peer", shortID(p), "err", err)
		if aerr := n.cfg.Store.AbandonSnapshot(ctx); aerr != nil {
			n.log.Warn("could not leave a snapshot install to op replay", "err", aerr)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w from %s: %w", errSnapshotFailed, shortID(p), err)
	}
	n.stats.SnapshotsInstalled.Add(1)
	n.log.Info("started from a snapshot", "peer", shortID(p), "records", res.Records, "ops", res.Ops)
	return n.cfg.Store.VersionVector(ctx)
}

// snapshotAhead is how many chunks the reader of a snapshot may hold that the install has
// not taken yet (each at most opsMessageSoft on the wire).
const snapshotAhead = 4

// snapshotRead is one message of a snapshot as the install takes it, or the error that
// ended the stream.
type snapshotRead struct {
	chunk store.SnapshotChunk
	err   error
}

// readSnapshot reads a snapshot's messages off c on a goroutine of its own, up to
// snapshotAhead chunks ahead of the install: while the replica installs a batch, the next
// chunks are received, inflated and decoded on the other core (docs/BENCH.md, "A second
// device joins"). It stops after the end or the first error, which it hands on last. stop
// ends it and waits for it; unblock says the install ended early (an error), so the
// reader may be waiting on the stream: its read deadline is cut short, and the session,
// which ends with that error, reads nothing more.
func (n *Node) readSnapshot(ctx context.Context, c *conn, claim *snapshotClaim) (<-chan snapshotRead, func(unblock bool)) {
	out := make(chan snapshotRead, snapshotAhead)
	done := make(chan struct{})
	var wg stdsync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(out)
		for {
			r, end := n.readSnapshotMessage(ctx, c, claim)
			select {
			case out <- r:
			case <-done:
				return
			}
			if end || r.err != nil {
				return
			}
		}
	}()
	return out, func(unblock bool) {
		close(done)
		if unblock {
			_ = c.s.SetReadDeadline(time.Now())
		}
		wg.Wait()
	}
}

// readSnapshotMessage reads the next message of a snapshot; end reports its last.
func (n *Node) readSnapshotMessage(ctx context.Context, c *conn, claim *snapshotClaim) (r snapshotRead, end bool) {
	if err := ctx.Err(); err != nil {
		return snapshotRead{err: err}, false
	}
	m, err := c.recv()
	claim.touch()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		kick(n.stallKick) // the path may be dead: a round with the other members takes over
	}
	if err != nil {
		return snapshotRead{err: err}, false
	}
	switch m.Type {
	case msgSnapBegin:
		return snapshotRead{chunk: store.SnapshotChunk{Begin: true, VV: m.VV, Total: int64(min(m.Total, 1<<62))}}, false
	case msgSnapRows:
		return snapshotRead{chunk: store.SnapshotChunk{Table: m.Table, Columns: m.Columns, Rows: m.Rows}}, false
	case msgSnapEnd:
		return snapshotRead{chunk: store.SnapshotChunk{VV: m.VV}}, true
	}
	return snapshotRead{err: fmt.Errorf("got message %d during a snapshot: %w", m.Type, ErrProtocol)}, false
}

// serveSnapshot streams this replica's snapshot from the cursor the peer names: SnapBegin,
// SnapRows messages of at most opsMessageSoft bytes each (or one larger row), flushed one by
// one so every write makes progress within sessionIdle and pushes the session's deadline
// on, then SnapEnd. A device still installing a snapshot says so and serves none.
func (n *Node) serveSnapshot(ctx context.Context, c *conn, from store.SnapshotCursor) error {
	chunk := opsMessageSoft
	if n.hooks.snapChunkBytes > 0 {
		chunk = n.hooks.snapChunkBytes
	}
	err := n.cfg.Store.Snapshot(ctx, from, chunk, func(ch store.SnapshotChunk) error {
		m := &message{Type: msgSnapRows, Table: ch.Table, Columns: ch.Columns, Rows: ch.Rows}
		switch {
		case ch.Begin:
			m = &message{Type: msgSnapBegin, VV: ch.VV, Total: uint64(max(ch.Total, 0))}
		case ch.Table == "":
			m = &message{Type: msgSnapEnd, VV: ch.VV}
		}
		if err := c.send(m); err != nil {
			return err
		}
		if err := c.flush(); err != nil {
			return err
		}
		c.dl.extend()
		return nil
	})
	if errors.Is(err, store.ErrSnapshotIncomplete) {
		_ = c.send(&message{Type: msgError, Text: "no snapshot: this device is still installing one"})
		_ = c.flush()
	}
	if err != nil {
		return fmt.Errorf("serve snapshot: %w", err)
	}
	n.stats.SnapshotsServed.Add(1)
	return nil
}

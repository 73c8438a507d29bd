package sync

import (
	"bufio"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// ErrProtocol reports a peer that broke the session's state machine.
var ErrProtocol = errors.New("sync protocol violation")

// errUnreachable marks a session that could not open a stream: the peer is offline, which
// Status shows as its state, not as a sync error.
var errUnreachable = errors.New("peer unreachable")

// conn is one side of a session stream, counting the bytes it moves for the traffic stats.
// On ProtocolSyncZ the messages travel DEFLATE-compressed: every flush ends with a sync
// flush of the compressor, so the peer can decode everything sent so far.
type conn struct {
	n *Node
	s network.Stream
	r *bufio.Reader
	w *bufio.Writer
	z *flate.Writer // nil on an uncompressed stream
	// snap: the stream speaks ProtocolSyncS, so both ends know the snapshot messages.
	snap bool
	// dl is the session's deadline; a snapshot's chunks push it on.
	dl *deadline
}

// deadline ends a session when it runs out: sessionTimeout after it began, or after the
// last chunk of a snapshot went through (a deadline per chunk, not per snapshot: a snapshot
// that keeps coming is never cut, however large).
type deadline struct {
	t *time.Timer
	d time.Duration
}

// sessionContext returns ctx cancelled when the session's deadline passes, the deadline,
// and the function that ends the session.
func (n *Node) sessionContext(parent context.Context) (context.Context, *deadline, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	dl := &deadline{d: n.sessionTimeout()}
	dl.t = time.AfterFunc(dl.d, func() { cancel(fmt.Errorf("session: %w", context.DeadlineExceeded)) })
	return ctx, dl, func() { dl.t.Stop(); cancel(context.Canceled) }
}

// extend pushes the deadline on by the session's timeout from now (after it passed, the
// session is already over).
func (d *deadline) extend() {
	if d != nil {
		d.t.Reset(d.d)
	}
}

func (n *Node) newConn(s network.Stream) *conn {
	if n.hooks.wrapStream != nil {
		s = n.hooks.wrapStream(s)
	}
	m := meter{rw: s, stats: &n.stats}
	c := &conn{n: n, s: s, snap: s.Protocol() == ProtocolSyncS}
	if s.Protocol() == ProtocolSync {
		c.r, c.w = bufio.NewReaderSize(m, 64<<10), bufio.NewWriterSize(m, 64<<10)
		return c
	}
	// BestSpeed: ops batches are JSON records that share keys and vocabulary; the fast
	// level already takes most of what DEFLATE can, at a small share of the CPU.
	z, _ := n.zw.Get().(*flate.Writer)
	if z != nil {
		z.Reset(m)
	} else {
		var err error
		if z, err = flate.NewWriter(m, flate.BestSpeed); err != nil {
			panic(err) // only for an invalid level
		}
	}
	c.z = z
	c.r, c.w = bufio.NewReaderSize(flate.NewReader(m), 64<<10), bufio.NewWriterSize(z, 64<<10)
	return c
}

// release hands the session's compressor back for the next session; the conn must not be
// used after it.
func (c *conn) release() {
	if c.z != nil {
		c.n.zw.Put(c.z)
		c.z, c.w = nil, nil
	}
}

// syncProtocols are the protocols an initiator offers, preferred first.
func (n *Node) syncProtocols() []protocol.ID {
	if n.hooks.plainOnly {
		return []protocol.ID{ProtocolSync}
	}
	return []protocol.ID{ProtocolSyncS, ProtocolSyncZ, ProtocolSync}
}

// meter counts the bytes a session stream moves (compressed, when it is).
type meter struct {
	rw    io.ReadWriter
	stats *Stats
}

func (m meter) Read(p []byte) (int, error) {
	k, err := m.rw.Read(p)
	m.stats.BytesRecv.Add(int64(k))
	return k, err
}

func (m meter) Write(p []byte) (int, error) {
	k, err := m.rw.Write(p)
	m.stats.BytesSent.Add(int64(k))
	return k, err
}

// Every read and write of a session must make progress within sessionIdle: a connection
// that went dead (a cut cable, a sleeping laptop) ends the session in seconds, not at the
// session deadline, and frees the origins it was pulling for another session.
func (c *conn) send(m *message) error {
	_ = c.s.SetWriteDeadline(time.Now().Add(sessionIdle))
	_, err := writeMessage(c.w, m)
	return err
}

func (c *conn) flush() error {
	_ = c.s.SetWriteDeadline(time.Now().Add(sessionIdle))
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	if c.z != nil {
		if err := c.z.Flush(); err != nil {
			return fmt.Errorf("send: %w", err)
		}
	}
	return nil
}

func (c *conn) recv() (*message, error) {
	_ = c.s.SetReadDeadline(time.Now().Add(sessionIdle))
	m, _, err := readMessage(c.r)
	if err == nil && m.Type == msgError {
		switch m.Text {
		case removedText:
			return nil, ErrRemoved
		case busyText:
			return nil, ErrCrossJoin
		}
		return nil, fmt.Errorf("peer refused: %s: %w", m.Text, ErrProtocol)
	}
	return m, err
}

func (c *conn) expect(t byte) (*message, error) {
	m, err := c.recv()
	if err != nil {
		return nil, err
	}
	if m.Type != t {
		return nil, fmt.Errorf("got message %d, want %d: %w", m.Type, t, ErrProtocol)
	}
	return m, nil
}

// hello builds this node's Hello.
func (n *Node) hello(ctx context.Context) (*message, error) {
	vv, err := n.cfg.Store.VersionVector(ctx)
	if err != nil {
		return nil, err
	}
	g := n.group()
	gb, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return &message{Type: msgHello, GroupID: g.GroupID, Name: n.cfg.DeviceName, VV: vv, Group: gb}, nil
}

// onHello checks the peer's group, merges its group state and remembers its vector.
func (n *Node) onHello(p peer.ID, m *message) error {
	var g groupState
	if err := json.Unmarshal(m.Group, &g); err != nil {
		return fmt.Errorf("hello group state: %w", ErrMalformed)
	}
	if m.GroupID != g.GroupID {
		return fmt.Errorf("hello: %w", ErrMalformed)
	}
	if err := n.mergeGroup(g.clone()); err != nil {
		return err
	}
	n.mu.Lock()
	if n.state.RemoteVV == nil {
		n.state.RemoteVV = map[string]store.VersionVector{}
	}
	n.state.RemoteVV[p.String()] = m.VV
	n.mu.Unlock()
	return nil
}

func (n *Node) markSynced(p peer.ID) {
	n.mu.Lock()
	if n.state.LastSync == nil {
		n.state.LastSync = map[string]int64{}
	}
	n.state.LastSync[p.String()] = n.cfg.Now().UnixMilli()
	n.mu.Unlock()
	n.stats.Sessions.Add(1)
}

// sessionTimeout bounds one session, either side.
func (n *Node) sessionTimeout() time.Duration {
	if n.hooks.sessionTimeout > 0 {
		return n.hooks.sessionTimeout
	}
	return sessionTimeout
}

// runSession is the initiator's side: Hello exchange, then we pull, then the peer pulls.
func (n *Node) runSession(ctx context.Context, p peer.ID) error {
	ctx, dl, cancel := n.sessionContext(ctx)
	defer cancel()
	s, err := n.host.NewStream(network.WithAllowLimitedConn(ctx, "sync"), p, n.syncProtocols()...)
	if err != nil {
		return fmt.Errorf("open sync stream: %w: %w", errUnreachable, err)
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { s.Reset() })
	defer stop()
	_ = s.SetDeadline(time.Now().Add(n.sessionTimeout()))
	c := n.newConn(s)
	c.dl = dl
	defer c.release()
	h, err := n.hello(ctx)
	if err != nil {
		s.Reset()
		return err
	}
	if err := c.send(h); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	rh, err := c.expect(msgHello)
	if errors.Is(err, ErrRemoved) {
		n.markRemoved(p)
	}
	if err != nil {
		return err
	}
	if rh.GroupID != h.GroupID {
		s.Reset()
		return ErrOtherGroup
	}
	if err := n.onHello(p, rh); err != nil {
		s.Reset()
		return err
	}
	pulled := n.pull(ctx, c, h.VV, rh.VV)
	// A refused stamp in an op batch leaves the stream in step; a refused snapshot does not.
	if pulled != nil && (!errors.Is(pulled, memory.ErrClockAhead) || errors.Is(pulled, errSnapshotFailed)) {
		s.Reset()
		return pulled
	}
	if err := n.serve(ctx, c); err != nil {
		s.Reset()
		return err
	}
	n.markSynced(p)
	return pulled // a refused stamp: the peer got our ops, and Status shows the cause
}

// handleSync is the responder's side. Non-members are refused before a byte is read.
func (n *Node) handleSync(s network.Stream) {
	if !n.enter() {
		s.Reset()
		return
	}
	defer n.wg.Done()
	p := s.Conn().RemotePeer()
	g := n.group()
	if _, gone := g.Removed[p.String()]; gone {
		n.tellRemoved(s, p)
		return
	}
	if !g.isMember(p.String()) {
		s.Reset()
		n.mu.Lock()
		pairing := p == n.pairTarget // our inviter, which already counts us in; we are still in the handshake
		n.mu.Unlock()
		if !pairing {
			n.log.Warn("refused sync stream from a non-member", "peer", shortID(p))
			n.host.Network().ClosePeer(p)
		}
		return
	}
	defer s.Close()
	ctx, dl, cancel := n.sessionContext(context.Background())
	defer cancel()
	// Each read and write renews its idle deadline, which replaces the stream's overall one,
	// so the session's end is enforced here: a peer that trickles bytes is cut at the
	// deadline, as the initiator's side is (a snapshot's chunks push it on, on both sides).
	stop := context.AfterFunc(ctx, func() { s.Reset() })
	defer stop()
	c := n.newConn(s)
	c.dl = dl
	defer c.release()
	if err := n.respond(ctx, c, p); err != nil {
		n.log.Debug("sync session failed", "peer", shortID(p), "err", err)
		s.Reset()
		return
	}
	n.markSynced(p)
}

func (n *Node) respond(ctx context.Context, c *conn, p peer.ID) error {
	rh, err := c.expect(msgHello)
	if err != nil {
		return err
	}
	h, err := n.hello(ctx)
	if err != nil {
		return err
	}
	if rh.GroupID != h.GroupID {
		_ = c.send(&message{Type: msgError, Text: "different group"})
		_ = c.flush()
		return ErrOtherGroup
	}
	if err := n.onHello(p, rh); err != nil {
		return err
	}
	if err := c.send(h); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	if err := n.serve(ctx, c); err != nil {
		return err
	}
	return n.pull(ctx, c, h.VV, rh.VV)
}

// pull asks for every origin where the peer is ahead of mine and applies the batches as they
// arrive, one transaction each. A device that holds nothing of any other device first
// installs the peer's snapshot, when the peer speaks snapshots and holds enough (snapshot.go).
func (n *Node) pull(ctx context.Context, c *conn, mine, theirs store.VersionVector) error {
	if claim := n.claimSnapshot(ctx, c, mine, theirs); claim != nil {
		vv, err := n.pullSnapshot(ctx, c, claim)
		if err != nil {
			return err
		}
		mine = vv
	}
	// An origin another session is already pulling is left to it: two sessions (ours and the
	// peer's, started by the same event) would otherwise fetch and apply the same ops twice.
	// A claim whose session has received nothing for pullStall is taken over: its path may
	// be dead, and another member holds the same ops.
	w := &message{Type: msgWant}
	claim := newPullClaim()
	n.mu.Lock()
	cuts := n.state.Group.Cuts
	for _, o := range sortedOrigins(theirs) {
		if cut, removed := cuts[o]; removed && mine[o] >= cut {
			continue // a removed device: nothing past its cut-off is wanted (ApplyOps drops it too)
		}
		if theirs[o] <= mine[o] {
			continue
		}
		if cur := n.pulling[o]; cur != nil && (cur.snapshot || !cur.stalled()) {
			continue
		} else if cur != nil {
			n.log.Debug("took over a stalled pull", "origin", shortIDString(o))
		}
		n.pulling[o] = claim
		w.Wants = append(w.Wants, want{Origin: o, After: mine[o]})
	}
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		for _, wt := range w.Wants {
			if n.pulling[wt.Origin] == claim {
				delete(n.pulling, wt.Origin)
			}
		}
		n.mu.Unlock()
	}()
	if err := c.send(w); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	applied := 0
	var refused error // ops refused for their clock stamp: reported when the pull is done
	defer func() {
		if applied > 0 {
			n.NotifyLocalWrite() // relay: what we just learned goes on to the other members
		}
	}()
	// Receive and decode the next batches while SQLite applies the current one.
	type recvd struct {
		m   *message
		err error
	}
	ch := make(chan recvd, 4)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			m, err := c.recv()
			claim.touch()
			select {
			case ch <- recvd{m, err}:
			case <-stop:
				return
			}
			if err != nil || m.Type != msgOps {
				return
			}
		}
	}()
	tick := time.NewTicker(pullStall / 2)
	defer tick.Stop()
	kicked := false
	for {
		var r recvd
		select {
		case r = <-ch:
			kicked = false
		case <-tick.C:
			// Silence: the path may be dead. Keep waiting (the idle deadline ends this
			// session), but have a round with the other members take our origins over.
			if !kicked && len(w.Wants) > 0 && claim.stalled() {
				kicked = true
				kick(n.stallKick)
			}
			continue
		case <-ctx.Done():
			return ctx.Err()
		}
		if r.err != nil {
			return r.err
		}
		switch r.m.Type {
		case msgDone:
			return refused
		case msgOps:
			res, err := n.cfg.Store.ApplyOps(ctx, r.m.Ops)
			if errors.Is(err, memory.ErrClockAhead) {
				// The rest was applied; the session goes on (other origins are not held up)
				// and ends with this error, which Status shows once it repeats.
				refused, err = fmt.Errorf("apply batch from %s: %w", r.m.Origin, err), nil
			}
			if err != nil {
				return fmt.Errorf("apply batch from %s: %w", r.m.Origin, err)
			}
			applied += res.Applied
			n.stats.OpsApplied.Add(int64(res.Applied))
		default:
			return fmt.Errorf("got message %d during pull: %w", r.m.Type, ErrProtocol)
		}
	}
}

// pullStall is how long a pull may receive nothing before another session may take its
// origins over. A responder streams its batches back to back (a few ms each on a LAN, well
// under a second on a loaded machine), so a second of silence means a slow or dead path;
// nothing is lost by a takeover of a live one: ops apply in seq order and a duplicate batch
// is skipped.
const pullStall = time.Second

// pullClaim is one pull's hold on the origins it asked for, with the time it last received a
// message.
type pullClaim struct {
	last atomic.Int64
	// snapshot: the claim of a snapshot being installed. It is never taken over (the
	// install holds the replica's writer, so a second pull could apply nothing until it
	// ends); a dead path ends it at the idle deadline and frees the origins.
	snapshot bool
}

func newPullClaim() *pullClaim {
	c := &pullClaim{}
	c.touch()
	return c
}

func (c *pullClaim) touch() { c.last.Store(time.Now().UnixNano()) }

func (c *pullClaim) stalled() bool {
	return time.Since(time.Unix(0, c.last.Load())) >= pullStall
}

// serve answers one Want with Ops batches in seq order, then Done. It serves ops of any
// origin it holds: that is what lets ops relay through any member.
func (n *Node) serve(ctx context.Context, c *conn) error {
	w, err := c.recv()
	if err == nil && w.Type == msgSnapWant && c.snap {
		if err := n.serveSnapshot(ctx, c, w.From); err != nil {
			return err
		}
		w, err = c.recv()
	}
	if err != nil {
		return err
	}
	if w.Type != msgWant {
		return fmt.Errorf("got message %d, want %d: %w", w.Type, msgWant, ErrProtocol)
	}
	for _, wt := range w.Wants {
		after := wt.After
		for {
			ops, err := n.cfg.Store.OpsSince(ctx, wt.Origin, after, n.cfg.BatchSize)
			if err != nil {
				return err
			}
			if len(ops) == 0 {
				break
			}
			for len(ops) > 0 {
				k, size := 0, 0
				for k < len(ops) && (k == 0 || size+len(ops[k].Payload) < opsMessageSoft) {
					size += len(ops[k].Payload) + 64
					k++
				}
				if err := c.send(&message{Type: msgOps, Origin: wt.Origin, Ops: ops[:k]}); err != nil {
					return err
				}
				n.stats.OpsSent.Add(int64(k))
				after = ops[k-1].Seq
				ops = ops[k:]
			}
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
	if err := c.send(&message{Type: msgDone}); err != nil {
		return err
	}
	return c.flush()
}

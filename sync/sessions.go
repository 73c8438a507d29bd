package sync

import (
	"context"
	"errors"
	stdsync "sync"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// sessions is the protocol side of a node's state: one run record per peer (at most one
// session with each at a time), the origins being pulled, and what wakes a round. The maps
// are guarded by Node.mu.
type sessions struct {
	peers   map[peer.ID]*peerRun
	pulling map[string]*pullClaim // origins some session is pulling now: no second session pulls them
	// zw holds the DEFLATE writers of finished sessions: a flate.Writer is ~1 MB of state
	// to allocate and clear, a twentieth of a heal's CPU when made per session.
	zw        stdsync.Pool
	writeKick chan struct{} // a local write to push after the debounce
	stallKick chan struct{} // a pull went silent: run a round so another member takes its origins over
}

// peerRun is the runtime record of one peer's sessions.
type peerRun struct {
	inflight bool
	again    bool
	// fails counts sessions in a row that reached the peer and then failed; lastErr is the
	// cause of the latest. From failWarn on, the peer shows the error in Status.
	fails   int
	lastErr string
	// cancel ends the running session (a dead peer, a group change); nil when none runs.
	cancel context.CancelFunc
}

// failWarn is the number of failed sessions in a row after which a peer is in error: one
// failure is a cut connection, three in a row are a cause that will not go away by itself.
const failWarn = 3

// syncAll starts a session with every live member; with all set it also tries members that
// gossip has not (yet) seen, which is how a node finds the others before gossip converges.
func (n *Node) syncAll(ctx context.Context, all bool) {
	g := n.group()
	n.mu.Lock()
	alive := len(n.alive) > 0
	removed := n.state.RemovedBy != ""
	n.mu.Unlock()
	if removed {
		return // our ops would be dropped; Status says what to do
	}
	for id := range g.Members {
		p, err := peer.Decode(id)
		if err != nil || p == n.self {
			continue
		}
		n.mu.Lock()
		live := n.alive[p]
		n.mu.Unlock()
		if live || all || !alive || n.host.Network().Connectedness(p) == network.Connected {
			n.startSession(ctx, p)
		}
	}
}

// startSession runs a session with p unless one is running; then it asks that one to run
// again, so a burst of triggers costs at most one extra session.
func (n *Node) startSession(ctx context.Context, p peer.ID) {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	pr := n.peers[p]
	if pr == nil {
		pr = &peerRun{}
		n.peers[p] = pr
	}
	if pr.inflight {
		pr.again = true
		n.mu.Unlock()
		return
	}
	pr.inflight = true
	n.wg.Add(1)
	n.mu.Unlock()
	go func() {
		defer n.wg.Done()
		for {
			sctx, cancel := context.WithCancel(ctx)
			n.mu.Lock()
			pr.cancel = cancel
			n.mu.Unlock()
			err := n.runSession(sctx, p)
			cancel()
			if err != nil && ctx.Err() == nil {
				n.log.Debug("sync session failed", "peer", shortID(p), "err", err)
			}
			n.mu.Lock()
			pr.cancel = nil
			n.noteSessionLocked(p, pr, err, ctx.Err() != nil || errors.Is(err, context.Canceled))
			if pr.again && ctx.Err() == nil {
				pr.again = false
				n.mu.Unlock()
				continue
			}
			pr.inflight = false
			n.mu.Unlock()
			return
		}
	}()
}

// noteSessionLocked keeps the failure streak of a peer's sessions. An unreachable peer is not
// an error (Status shows it dead); a session that reached the peer and failed is, and the
// streak's first WARN names the cause once, not every retry.
func (n *Node) noteSessionLocked(p peer.ID, pr *peerRun, err error, closing bool) {
	switch {
	case closing || errors.Is(err, errUnreachable):
	case err == nil:
		if pr.fails >= failWarn {
			n.log.Info("sync with peer recovered", "peer", shortID(p))
		}
		pr.fails, pr.lastErr = 0, ""
	default:
		pr.fails++
		pr.lastErr = err.Error()
		if pr.fails == failWarn {
			n.log.Warn("sync with peer keeps failing", "peer", shortID(p), "sessions", pr.fails, "err", err)
		}
	}
}

// preemptSessions ends every running session and has it run again at once, so a group
// change (a removal, a key rotation) reaches every member now, not after a long catch-up.
func (n *Node) preemptSessions() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, pr := range n.peers {
		if pr.cancel != nil {
			pr.again = true
			pr.cancel()
		}
	}
}

// dropSessions ends p's sessions (p was declared dead): its connection is closed, which
// resets the streams of both our sessions and its, so the origins they were pulling are
// free for a session with a live member, which a kick starts.
func (n *Node) dropSessions(p peer.ID) {
	n.mu.Lock()
	if pr := n.peers[p]; pr != nil && pr.cancel != nil {
		pr.cancel()
	}
	n.mu.Unlock()
	n.host.Network().ClosePeer(p)
	n.log.Debug("peer declared dead: its sessions dropped", "peer", shortID(p))
}

func shortID(p peer.ID) string {
	s := p.String()
	if len(s) > 12 {
		return s[len(s)-12:]
	}
	return s
}

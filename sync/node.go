package sync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/control"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/store"
)

// Protocol IDs. A node speaks exactly these; everything else is refused. ProtocolSyncZ is
// ProtocolSync's messages on a DEFLATE-compressed stream: an initiator offers it first and
// falls back to ProtocolSync with a device that does not speak it (see DESIGN.md, "Wire
// format"). ProtocolSyncS is ProtocolSyncZ plus the snapshot messages: a device that
// negotiates it can ask for and serve snapshots (DESIGN.md, "Snapshots"); one that does not
// speak it is offered ProtocolSyncZ next.
const (
	ProtocolSync  protocol.ID = "/memnode/sync/1.0.0"
	ProtocolSyncZ protocol.ID = "/memnode/sync-deflate/1.0.0"
	ProtocolSyncS protocol.ID = "/memnode/sync-snapshot/1.0.0"
	ProtocolPair  protocol.ID = "/memnode/pair/1.0.0"
)

// Store is the replica as sync uses it; *replica.Replica satisfies it.
type Store interface {
	Origin() string
	VersionVector(ctx context.Context) (store.VersionVector, error)
	OpsSince(ctx context.Context, origin string, after uint64, limit int) ([]store.Op, error)
	ApplyOps(ctx context.Context, ops []store.Op) (store.ApplyResult, error)
	SetDeviceName(ctx context.Context, origin, name string) error
	// CutOrigin drops origin's ops past seq, held now or arriving later (a removal).
	CutOrigin(ctx context.Context, origin string, seq uint64) (int, error)
	// Compact drops the ops at or below floor that no longer change any state (compact.go).
	Compact(ctx context.Context, floor store.VersionVector) (store.CompactResult, error)
	// IsBlank, Snapshot and InstallSnapshot start a new device from a snapshot (snapshot.go).
	IsBlank(ctx context.Context) (bool, error)
	Snapshot(ctx context.Context, chunkBytes int, emit func(store.SnapshotChunk) error) error
	InstallSnapshot(ctx context.Context, next func() (store.SnapshotChunk, error)) (store.SnapshotResult, error)
}

// Defaults.
const (
	DefaultAntiEntropyInterval = 30 * time.Second
	DefaultCompactInterval     = 5 * time.Minute
	DefaultDebounce            = 250 * time.Millisecond
	DefaultBatchSize           = 500
	DefaultJoinRetry           = 2 * time.Second
	DefaultSnapshotMin         = 1000
	sessionTimeout             = 2 * time.Minute
	sessionIdle                = 10 * time.Second // per read or write of a session
	pairTimeout                = 15 * time.Second
)

// Config configures a Node.
type Config struct {
	// DataDir holds identity.key (unless Identity is set) and group.json.
	DataDir string
	// Identity is the device key; nil loads or creates DataDir/identity.key.
	Identity   crypto.PrivKey
	DeviceName string
	// ListenAddrs are libp2p multiaddrs (TCP and QUIC). Default: loopback, port 0.
	ListenAddrs []string
	// GossipBindAddr/GossipPort are memberlist's address. Port 0 reuses the last port
	// (if free) or picks one.
	GossipBindAddr string
	GossipPort     int
	// Store is the replica; its Origin must be this device's peer ID.
	Store Store
	// Feed is the store's change feed: a change with LocalOps is pushed to the live members
	// after Debounce. Nil means only NotifyLocalWrite and anti-entropy rounds push.
	Feed    *feed.Bus
	Logger  *slog.Logger
	Version string
	// MDNS announces and discovers group members on the LAN.
	MDNS bool
	// AntiEntropyInterval is the period of the full exchange with every live member.
	AntiEntropyInterval time.Duration
	// Debounce groups local writes before they are pushed.
	Debounce time.Duration
	// CompactInterval is how often the node compacts the op-log up to what every member
	// holds (compact.go); negative turns the background compaction off (Compact still works).
	CompactInterval time.Duration
	// BatchSize is the number of ops per Ops message and per ApplyOps transaction.
	BatchSize int
	// JoinRetry is how often a node that misses members tries to (re)join their gossip.
	JoinRetry time.Duration
	// SnapshotMin is the fewest ops a peer must hold for this device, while it holds
	// nothing of any other device, to start from the peer's snapshot instead of replaying
	// every op (0: DefaultSnapshotMin; negative: never).
	SnapshotMin int
	// Now is the wall clock (tests inject one).
	Now func() time.Time

	// wrapStream, when set (only by this package's tests), wraps every session stream: a
	// test makes a path go silent without closing it, as a cut cable does.
	wrapStream func(network.Stream) network.Stream
	// sessionTimeout, when set (only by this package's tests), replaces sessionTimeout.
	sessionTimeout time.Duration
	// plainOnly makes the node speak only ProtocolSync, as devices before ProtocolSyncZ
	// did (tests of the fallback).
	plainOnly bool
	// joinChecked, when set (only by this package's tests), is called by Join once it has
	// checked that it may join and before it dials the inviter: a test orders a join the
	// inviter makes into this device at that moment.
	joinChecked func(inviter peer.ID)
}

// Validate fills defaults and checks required fields.
func (c *Config) Validate() error {
	if c.DataDir == "" {
		return errors.New("sync config: DataDir is required")
	}
	if c.Store == nil {
		return errors.New("sync config: Store is required")
	}
	if len(c.ListenAddrs) == 0 {
		c.ListenAddrs = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
	}
	if c.GossipBindAddr == "" {
		c.GossipBindAddr = "127.0.0.1"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.AntiEntropyInterval <= 0 {
		c.AntiEntropyInterval = DefaultAntiEntropyInterval
	}
	if c.Debounce <= 0 {
		c.Debounce = DefaultDebounce
	}
	if c.CompactInterval == 0 {
		c.CompactInterval = DefaultCompactInterval
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.JoinRetry <= 0 {
		c.JoinRetry = DefaultJoinRetry
	}
	if c.SnapshotMin == 0 {
		c.SnapshotMin = DefaultSnapshotMin
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return nil
}

// Errors.
var (
	ErrClosed      = errors.New("sync node closed")
	ErrNotStarted  = errors.New("sync node not started")
	ErrNotMember   = errors.New("peer is not a member of this group")
	ErrUnknownPeer = errors.New("no such device in the group")
	// ErrAmbiguousDevice: a name or short ID that matches several devices; use the peer ID.
	ErrAmbiguousDevice = errors.New("more than one device matches: use the full peer ID")
	ErrRemoveSelf      = errors.New("a device cannot remove itself: run the command on another device")
	ErrOriginMatch     = errors.New("replica origin is not this device's peer ID")
)

// Node is one device's sync endpoint: libp2p host, memberlist, pairing and anti-entropy.
type Node struct {
	// gossipDown is set once memberlist was shut down without leaving (tests simulate a
	// crash that way); memberlist panics on Leave after Shutdown.
	gossipDown atomic.Bool
	cfg        Config
	log        *slog.Logger
	priv       crypto.PrivKey
	self       peer.ID
	path       string // group.json

	host host.Host
	ml   *memberlist.Memberlist
	keys *memberlist.Keyring
	mdns interface{ Close() error }

	writeKick  chan struct{}
	memberKick chan struct{}
	stateKick  chan struct{}

	// zw holds the DEFLATE writers of finished sessions: a flate.Writer is ~1 MB of state
	// to allocate and clear, a twentieth of a heal's CPU when made per session.
	zw         stdsync.Pool
	saveMu     stdsync.Mutex // serialises persist and syncKeyring, which run outside mu
	mu         stdsync.Mutex
	state      stateFile
	invites    []pendingInvite
	pairTarget peer.ID
	hosting    int // pairings this device is answering as the inviter now
	peers      map[peer.ID]*peerRun
	alive      map[peer.ID]bool
	metas      *liveMetas            // what memberlist's event delegate copied (safe to read any time)
	cut        map[peer.ID]bool      // peers a test has partitioned away (always empty in production)
	pulling    map[string]*pullClaim // origins some session is pulling now: no second session pulls them
	// snapRefused are peers whose snapshot this device refused (a stamp beyond the clock
	// bound, a malformed snapshot): it catches up from them by op replay instead.
	snapRefused map[peer.ID]bool
	stallKick   chan struct{} // a pull went silent: run a round so another member takes its origins over
	started     bool
	closed      bool
	cancel      context.CancelFunc
	wg          stdsync.WaitGroup
	compacting  atomic.Bool // a compaction runs (compact.go)

	stats Stats
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

// New checks cfg and loads the identity; Start brings the node up.
func New(cfg Config) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	priv := cfg.Identity
	if priv == nil {
		var err error
		if priv, _, err = LoadOrCreateIdentity(datadir.Dir(cfg.DataDir).Identity()); err != nil {
			return nil, err
		}
	}
	self, err := peer.IDFromPrivateKey(priv)
	if err != nil {
		return nil, fmt.Errorf("new sync node: %w", err)
	}
	if cfg.Store.Origin() != self.String() {
		return nil, fmt.Errorf("new sync node: %w", ErrOriginMatch)
	}
	return &Node{
		cfg: cfg, log: cfg.Logger.With("component", "sync"), priv: priv, self: self,
		path:       datadir.Dir(cfg.DataDir).Group(),
		writeKick:  make(chan struct{}, 1),
		memberKick: make(chan struct{}, 1),
		stateKick:  make(chan struct{}, 1),
		peers:      map[peer.ID]*peerRun{},
		alive:      map[peer.ID]bool{},
		metas:      &liveMetas{m: map[string][]byte{}},
		pulling:    map[string]*pullClaim{},
		stallKick:  make(chan struct{}, 1),
	}, nil
}

// ID returns this device's peer ID.
func (n *Node) ID() peer.ID { return n.self }

// Addrs returns the libp2p addresses the node listens on (after Start).
func (n *Node) Addrs() []ma.Multiaddr {
	if n.host == nil {
		return nil
	}
	return n.host.Addrs()
}

// TrafficStats returns the counters since Start.
func (n *Node) TrafficStats() *Stats { return &n.stats }

// Start loads the group state (creating a group of one on first run), starts the libp2p host
// and memberlist, and begins anti-entropy. ctx bounds startup only.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return ErrClosed
	}
	if n.started {
		n.mu.Unlock()
		return errors.New("start sync node: already started")
	}
	n.started = true
	n.mu.Unlock()

	st, ok, err := loadState(n.path)
	if err != nil {
		return err
	}
	if !ok {
		g, err := newGroup(Member{PeerID: n.self.String(), Name: n.cfg.DeviceName, Version: n.cfg.Version, Updated: n.cfg.Now().UnixMilli()})
		if err != nil {
			return err
		}
		st = stateFile{Group: g}
	}
	if !st.Group.isMember(n.self.String()) {
		n.log.Warn("this device was removed from its group; starting a new group of one")
		g, err := newGroup(Member{PeerID: n.self.String(), Name: n.cfg.DeviceName, Version: n.cfg.Version, Updated: n.cfg.Now().UnixMilli()})
		if err != nil {
			return err
		}
		st = stateFile{Group: g}
	}
	n.mu.Lock()
	n.state = st
	n.mu.Unlock()

	h, err := libp2p.New(
		libp2p.Identity(n.priv),
		libp2p.ListenAddrStrings(n.cfg.ListenAddrs...),
		libp2p.Security(noise.ID, noise.New),
		// Dial from an ephemeral port, not the listening one: with SO_REUSEPORT two devices
		// that dial each other at the same moment (crossing joins, both sides starting a
		// sync) open one TCP connection by simultaneous open, both sides start the noise
		// handshake as initiator, and it fails ("noise: message is too short"). memnode uses
		// no relays or hole punching, which are what reuseport is for.
		libp2p.Transport(tcp.NewTCPTransport, tcp.DisableReuseport()),
		libp2p.Transport(quic.NewTransport),
		libp2p.ConnectionGater(gater{n}),
		libp2p.DisableRelay(),
		libp2p.DisableMetrics(),
		libp2p.Ping(false),
		libp2p.UserAgent("memnode/"+n.cfg.Version),
	)
	if err != nil {
		return fmt.Errorf("start libp2p host: %w", err)
	}
	n.host = h
	if err := n.startMemberlist(); err != nil {
		h.Close()
		return err
	}
	// Handlers only now: a session may rotate the gossip key, which needs the keyring.
	h.SetStreamHandler(ProtocolSync, n.handleSync)
	if !n.cfg.plainOnly {
		h.SetStreamHandler(ProtocolSyncZ, n.handleSync)
		h.SetStreamHandler(ProtocolSyncS, n.handleSync)
	}
	h.SetStreamHandler(ProtocolPair, n.handlePair)

	runCtx, cancel := context.WithCancel(context.Background())
	n.mu.Lock()
	n.cancel = cancel
	n.refreshSelfLocked()
	n.state.GossipPort = int(n.ml.LocalNode().Port)
	g := n.state.Group.clone()
	n.mu.Unlock()
	if err := n.persist(); err != nil {
		n.shutdownTransports()
		cancel()
		return err
	}
	n.learnAddrs(g)
	n.applyCuts(groupState{}, g)
	if err := n.publishName(ctx); err != nil {
		n.shutdownTransports()
		cancel()
		return err
	}
	if n.cfg.MDNS {
		if err := n.startMDNS(); err != nil {
			n.log.Warn("mDNS discovery unavailable", "err", err)
		}
	}
	var sub *feed.Subscription
	if n.cfg.Feed != nil {
		sub = n.cfg.Feed.Subscribe(0) // before Start returns: no commit after it is missed
	}
	n.wg.Add(2)
	go n.loop(runCtx, sub)
	go n.joinLoop(runCtx)
	kick(n.stateKick)
	n.log.Info("sync node started", "peer", n.self.String(), "addrs", fmt.Sprint(h.Addrs()), "gossip", n.ml.LocalNode().Address())
	return nil
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

// Close leaves the gossip group, closes the host and waits for every goroutine the node
// started. It is idempotent.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	cancel := n.cancel
	n.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	err := n.shutdownTransports()
	n.wg.Wait()
	n.mu.Lock()
	save := n.started && n.host != nil && n.state.Group.GroupID != ""
	n.mu.Unlock()
	if save {
		err = errors.Join(err, n.persist()) // keeps last-sync times across restarts
	}
	n.log.Info("sync node stopped")
	return err
}

func (n *Node) shutdownTransports() error {
	var errs []error
	if n.mdns != nil {
		errs = append(errs, n.mdns.Close())
	}
	if n.ml != nil && !n.gossipDown.Load() {
		if err := n.ml.Leave(time.Second); err != nil {
			n.log.Debug("leave gossip", "err", err)
		}
		errs = append(errs, n.ml.Shutdown())
	}
	if n.host != nil {
		errs = append(errs, n.host.Close())
	}
	return errors.Join(errs...)
}

// enter registers a goroutine with the node's WaitGroup unless the node is closing.
func (n *Node) enter() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.wg.Add(1)
	return true
}

// NotifyLocalWrite tells the node the replica has new local ops; they are pushed to the
// live members after the debounce delay. It never blocks. Commits published on
// Config.Feed need no call.
func (n *Node) NotifyLocalWrite() { kick(n.writeKick) }

func kick(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// loop runs anti-entropy rounds and pushes local writes; sub (nil without a feed) is the
// store's change feed, closed when the loop ends.
func (n *Node) loop(ctx context.Context, sub *feed.Subscription) {
	defer n.wg.Done()
	tick := time.NewTicker(n.cfg.AntiEntropyInterval)
	defer tick.Stop()
	var compactC <-chan time.Time
	if n.cfg.CompactInterval > 0 {
		compact := time.NewTicker(n.cfg.CompactInterval)
		defer compact.Stop()
		compactC = compact.C
	}
	var changed <-chan struct{}
	if sub != nil {
		changed = sub.Ready()
		defer sub.Close()
	}
	var debounce *time.Timer
	var debounceC <-chan time.Time
	defer func() {
		if debounce != nil {
			debounce.Stop()
		}
	}()
	push := func() {
		if debounceC == nil {
			debounce = time.NewTimer(n.cfg.Debounce)
			debounceC = debounce.C
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			n.syncAll(ctx, true)
		case <-compactC:
			n.compactSoon(ctx)
		case <-n.writeKick:
			push()
		case _, ok := <-changed:
			if !ok {
				changed = nil // the feed closed: anti-entropy rounds still run
				continue
			}
			if hasLocalOps(sub.Take()) {
				push()
			}
		case <-debounceC:
			debounceC = nil
			n.syncAll(ctx, false)
		case <-n.stateKick:
			n.learnAddrs(n.group())
			n.syncAll(ctx, true)
		case <-n.memberKick:
			n.refreshMembers(ctx)
		case <-n.stallKick:
			n.syncAll(ctx, false)
		}
	}
}

// hasLocalOps reports whether changes carry ops of this device to push. An overflow may have
// dropped such a change, so it counts as one.
func hasLocalOps(changes []feed.Change, overflowed bool) bool {
	if overflowed {
		return true
	}
	for _, c := range changes {
		if c.LocalOps {
			return true
		}
	}
	return false
}

func (n *Node) group() groupState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.state.Group.clone()
}

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

func shortID(p peer.ID) string {
	s := p.String()
	if len(s) > 12 {
		return s[len(s)-12:]
	}
	return s
}

// gater admits only group members, plus — while an invite is pending — unknown peers for the
// pairing protocol (the stream handlers enforce which protocol each may use).
type gater struct{ n *Node }

func (g gater) InterceptPeerDial(p peer.ID) bool { return g.n.admit(p, true) }
func (g gater) InterceptAddrDial(peer.ID, ma.Multiaddr) bool {
	return true
}
func (g gater) InterceptAccept(network.ConnMultiaddrs) bool { return true }
func (g gater) InterceptSecured(dir network.Direction, p peer.ID, _ network.ConnMultiaddrs) bool {
	return g.n.admit(p, dir == network.DirOutbound)
}
func (g gater) InterceptUpgraded(network.Conn) (bool, control.DisconnectReason) { return true, 0 }

func (n *Node) admit(p peer.ID, outbound bool) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	id := p.String()
	if n.cut[p] {
		return false
	}
	if _, gone := n.state.Group.Removed[id]; gone {
		// A removed device may connect only to be told so: its sync stream gets one Error
		// and the connection is closed (handleSync); pairing refuses it; we never dial it.
		return !outbound
	}
	if n.state.Group.isMember(id) {
		return true
	}
	if outbound {
		return p == n.pairTarget
	}
	return n.pendingInvitesLocked() > 0
}

func (n *Node) pendingInvitesLocked() int {
	now := n.cfg.Now()
	n.invites = slices.DeleteFunc(n.invites, func(i pendingInvite) bool { return !now.Before(i.expires) })
	return len(n.invites)
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

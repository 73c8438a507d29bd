package sync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
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
	ProtocolSyncS protocol.ID = "/memnode/sync-snapshot/3.0.0"
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
	// IsBlank, Snapshot, InstallSnapshot, SnapshotProgress and AbandonSnapshot start a new
	// device from a snapshot, in chunks that survive a cut (snapshot.go).
	IsBlank(ctx context.Context) (bool, error)
	Snapshot(ctx context.Context, from store.SnapshotCursor, chunkBytes int, emit func(store.SnapshotChunk) error) error
	InstallSnapshot(ctx context.Context, next func() (store.SnapshotChunk, error)) (store.SnapshotResult, error)
	SnapshotProgress(ctx context.Context) (store.SnapshotProgress, error)
	AbandonSnapshot(ctx context.Context) error
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

// Node is one device's sync endpoint: libp2p host, memberlist, pairing and anti-entropy. Its
// state is split by concern, one embedded part each, declared beside the code that owns it:
// membership (group state, gossip, liveness, pairing: group.go, membership.go, pairing.go,
// admit.go, removal.go), sessions (the sync protocol's per-peer runs and pulled origins:
// sessions.go, protocol.go), snapshots (snapshot.go) and the traffic counters (status.go).
// One mutex, mu, guards the maps and group state of all of them (a session's step reads the
// group and the pull claims at once); the parts are a layout, not separate locks.
type Node struct {
	cfg  Config
	log  *slog.Logger
	priv crypto.PrivKey
	self peer.ID
	host host.Host

	mu stdsync.Mutex
	membership
	sessions
	snapshots
	stats Stats

	started    bool
	closed     bool
	cancel     context.CancelFunc
	wg         stdsync.WaitGroup
	compacting atomic.Bool // a compaction runs (compact.go)

	// hooks are this package's tests' switches (hooks.go); a production node has the zero
	// value, which changes nothing.
	hooks *testHooks
}

// snapshots is the snapshot side of a node's state (snapshot.go), guarded by Node.mu.
type snapshots struct {
	// snapRefused are peers whose snapshot this device refused (a stamp beyond the clock
	// bound, a malformed snapshot): it catches up from them by op replay instead.
	snapRefused map[peer.ID]bool
}

// New checks cfg and loads the identity; Start brings the node up.
func New(cfg Config) (*Node, error) { return newNode(cfg, &testHooks{}) }

func newNode(cfg Config, hooks *testHooks) (*Node, error) {
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
		membership: membership{
			path:       datadir.Dir(cfg.DataDir).Group(),
			memberKick: make(chan struct{}, 1),
			stateKick:  make(chan struct{}, 1),
			alive:      map[peer.ID]bool{},
			metas:      &liveMetas{m: map[string][]byte{}},
		},
		sessions: sessions{
			writeKick: make(chan struct{}, 1),
			stallKick: make(chan struct{}, 1),
			peers:     map[peer.ID]*peerRun{},
			pulling:   map[string]*pullClaim{},
		},
		hooks: hooks,
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
	if !n.hooks.plainOnly {
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
	if n.ml != nil && !n.hooks.gossipDown.Load() {
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

// Package node wires memnode's parts into the long-lived daemon: it owns the data dir lock,
// the API server, the replica and the queue workers, and knows their start and stop order.
//
// Start order: lock data dir → identity, token, pid file → API (health answers at once, data
// routes 503) → open replica → recover claims, replay spool → search, sync → ready → workers.
// Start returns when all of it runs, or fails after undoing what it started.
// Stop order: stop intake (API) → leave the group and close libp2p (sync) → stop workers (a
// claimed batch is committed or released) → stop the context-file writer and the embedding
// worker → close the replica → remove the pid file and release the lock. Close during Start aborts the start first.
package node

import (
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/prio"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/pipeline"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/ai/offline"
	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/contextfile/writer"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/embed/worker"
	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
	memsync "github.com/memnode/memnode/sync"
	"github.com/memnode/memnode/team"
	"github.com/memnode/memnode/viewer"
)

// Config configures a Node.
type Config struct {
	DataDir  string
	Settings configs.Settings
	Version  string
	Logger   *slog.Logger
	// Compressor turns events into observations; nil means the offline compressor.
	Compressor ai.Compressor
	// Now is the wall clock (tests inject one).
	Now func() time.Time
	// Location renders times in the injected context (default: local time).
	Location *time.Location
	// OpenDelay postpones opening the database (tests of readiness use it).
	OpenDelay time.Duration
	// Embedder opens the embedding model for hybrid search (cmd: embed.OpenCybertron;
	// tests: embed.NewHashing or a tiny random model). Nil, or an error wrapping
	// embed.ErrNoModel, means FTS only. See embed.go.
	Embedder func() (embed.Embedder, error)
	// Linger, MaxDefer and DeferCap decide when queue workers run while hook events keep
	// arriving (pipeline.Config); zero means pipeline's defaults.
	Linger, MaxDefer time.Duration
	DeferCap         int
	// OpenKeys opens the AI key store the viewer's settings page writes keys to (opened on
	// first use: the OS keyring probe may take seconds). Nil: keys are set with the CLI only.
	OpenKeys func() (KeyStore, error)
	// ContextFiles maps a platform to its context file (platform.Platform.ContextFile):
	// the node keeps those files in step with memory (contextfile/writer). Empty: none.
	ContextFiles map[string]contextfile.Spec
	// TeamPassword returns the team cluster user's password (MEMNODE_TEAM_PASSWORD or the key
	// store, read by cmd/); team memory asks only once this device has joined a team.
	TeamPassword func() string
	// FirstRun says which coding agents are hooked up and where claude-mem's database is,
	// for the viewer's empty feed (cmd/ reads the agents' files and HOME). Nil: unknown.
	FirstRun func() apitype.ViewerFirstRun
	// ImportHistory imports the past sessions of a coding agent (cmd/ runs memnode import
	// --from-<platform>'s work in this process, through the node's own API), telling
	// progress the session files done of all; it answers the summary lines. Nil: the viewer
	// cannot import.
	ImportHistory func(ctx context.Context, platform string, progress func(done, total int)) ([]string, error)
	// Reload reads the settings again as the process would at start (settings.json under
	// the environment's and flags' overrides): the viewer's saved settings apply at once
	// where they can (configs.Info.Live). Nil: settings apply at the next start only.
	Reload func() (configs.Settings, error)
	// Restart asks the process to stop the node and start it again (cmd/ re-executes
	// itself); the viewer's sessions survive it. Nil: the viewer cannot restart the node.
	Restart func()
}

// Node is the running daemon.
type Node struct {
	cfg    Config
	seen   agentsSeen // the last event of each agent since start (doctor)
	log    *slog.Logger
	lockF  *os.File
	token  string
	origin string
	api    atomic.Pointer[api.Server]
	rep    atomic.Pointer[replica.Replica]
	// feed carries the replica's commits to sync and the embedding worker; closed after
	// the replica.
	feed    *feed.Bus
	sync    atomic.Pointer[memsync.Node]
	syncErr atomic.Pointer[string]
	team    atomic.Pointer[team.Team]
	teamErr atomic.Pointer[string]
	ready   atomic.Bool
	// live are the settings in effect: cfg.Settings, with the Live ones changed since
	// (configs.Settings.WithLive) by the viewer.
	live atomic.Pointer[configs.Settings]
	// viewerAuth is the viewer's sessions, kept in the data dir across restarts.
	viewerAuth *viewer.Auth
	// created is when this node was made: the viewer tells a restarted node (same PID
	// after the re-exec) by it.
	created time.Time
	// corrupt is the read or write error that showed the database corrupt (corrupt.go).
	corrupt atomic.Pointer[error]
	// phase is what the start does now and phaseSteps how many steps it has taken
	// (startphase.go): /health reports both, so `memnode start` waits on progress.
	phase      atomic.Pointer[string]
	phaseSteps atomic.Uint64
	// pipe is the event→record pipeline (ingest, queue workers), made once the replica is
	// open.
	pipe       atomic.Pointer[pipeline.Pipeline]
	embedW     atomic.Pointer[worker.Worker]
	ctxFiles   atomic.Pointer[writer.Writer]
	searchSvc  atomic.Pointer[search.Service]
	pidWritten bool
	cancel     context.CancelFunc // ends the long-lived parts' context
	imports    historyImports     // the viewer's import of an agent's past sessions
	wg         sync.WaitGroup
	// closeMu guards closed and the start in progress (Close cancels and waits for it).
	closeMu     sync.Mutex
	closed      bool
	cancelStart context.CancelFunc
	startDone   chan struct{}
}

// settings are the settings in effect now.
func (n *Node) settings() configs.Settings { return *n.live.Load() }

// applyLive puts next's live settings in effect (the context's bounds at the next session
// start, what the pipeline records from the next event) and logs what changed.
func (n *Node) applyLive(next configs.Settings) {
	cur := n.settings()
	upd := cur.WithLive(next)
	changed := configs.Changed(cur, upd)
	n.live.Store(&upd)
	if p := n.pipe.Load(); p != nil {
		p.SetPolicy(memory.Policy{ExcludedProjects: upd.ExcludedProjects, SkipTools: upd.SkipTools})
	}
	if len(changed) > 0 {
		n.log.Info("settings applied without a restart", "changed", strings.Join(changed, ","))
	}
	if waiting := configs.Changed(upd, next); len(waiting) > 0 {
		n.log.Info("settings saved; they apply at the next start", "waiting", strings.Join(waiting, ","))
	}
}

// New checks the config and prepares the data dir; it starts nothing.
func New(cfg Config) (*Node, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("node: data dir required")
	}
	if err := cfg.Settings.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Compressor == nil {
		cfg.Compressor = offline.New()
	}
	if err := datadir.Secure(cfg.DataDir); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: cfg.Logger, feed: feed.New(), created: cfg.Now(),
		viewerAuth: viewer.NewAuth(viewer.Config{Path: datadir.Dir(cfg.DataDir).ViewerSessions()})}
	s := cfg.Settings
	n.live.Store(&s)
	return n, nil
}

// Addr is the API listen address.
func (n *Node) Addr() string {
	if srv := n.api.Load(); srv != nil {
		return srv.Addr()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(n.cfg.Settings.Port))
}

// Ready reports whether the database is open and the node accepts data requests.
// It turns false for good once the database is found corrupt (corrupt.go).
func (n *Node) Ready() bool { return n.ready.Load() && n.corruption() == nil }

// Replica returns the open replica, or nil before ready.
func (n *Node) Replica() *replica.Replica { return n.rep.Load() }

// ErrClosed is returned by Start on a node that was closed.
var ErrClosed = errors.New("node: closed")

// Start takes the data dir, starts the API (health answers at once, data routes answer
// 503 until ready) and opens the database. It returns when every part runs, or with the
// error that kept one from starting — ErrAlreadyRunning if another node holds the data
// dir, replica.ErrCorrupt for a damaged database — after undoing what it started.
// Cancelling ctx, or Close, aborts a start in progress. Start may be called once.
func (n *Node) Start(ctx context.Context) error {
	n.closeMu.Lock()
	if n.closed || n.startDone != nil {
		n.closeMu.Unlock()
		return ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n.cancelStart = cancel
	done := make(chan struct{})
	n.startDone = done
	n.closeMu.Unlock()
	defer close(done)
	if err := n.start(ctx); err != nil {
		n.stop(context.Background())
		if ctx.Err() != nil && !errors.Is(err, ErrAlreadyRunning) {
			return fmt.Errorf("start: %w", context.Cause(ctx))
		}
		return err
	}
	return nil
}

// start starts the parts in order; stop undoes whatever part of it ran.
func (n *Node) start(ctx context.Context) error {
	f, err := datadir.Lock(n.cfg.DataDir)
	if err != nil {
		return err
	}
	n.lockF = f
	n.setPhase("starting")
	if n.token, err = loadOrCreateSecret(datadir.Dir(n.cfg.DataDir).Token(), 32); err != nil {
		return err
	}
	// The replica's origin is the device's libp2p peer ID: one identity for the op-log and
	// for the group.
	key, peerID, err := memsync.LoadOrCreateIdentity(datadir.Dir(n.cfg.DataDir).Identity())
	if err != nil {
		return err
	}
	n.origin = peerID.String()
	acfg := api.Config{
		Addr: n.Addr(), Socket: localnet.SocketPath(n.cfg.DataDir), Token: n.token, Version: n.cfg.Version,
		Backend: n, Logger: n.log, Feed: n.feed, Viewer: viewerBackend{n}, ViewerAuth: n.viewerAuth,
	}
	srv, err := api.New(acfg)
	if err != nil {
		return err
	}
	if err := srv.Start(); err != nil {
		return fmt.Errorf("%w (is another program using port %d? set MEMNODE_PORT)", err, n.cfg.Settings.Port)
	}
	n.api.Store(srv)
	_, port, _ := net.SplitHostPort(srv.Addr())
	p, _ := strconv.Atoi(port)
	exe, _ := os.Executable()
	pid := datadir.PIDInfo{PID: os.Getpid(), Port: p, StartedAt: n.cfg.Now().UnixMilli(), Exe: exe}
	if err := atomicfile.Write(datadir.Dir(n.cfg.DataDir).PID(), mustJSON(pid), 0o600); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	n.pidWritten = true
	n.setPhase("opening the database")
	if err := n.openDatabase(ctx); err != nil {
		return err
	}
	// The long-lived parts run on their own context: Start's ends when Start returns.
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	// Sync starts before readiness, so `memnode start && memnode peers invite` works; a
	// sync failure does not keep the node from serving.
	if !n.cfg.Settings.SyncDisabled {
		n.setPhase("starting device sync")
		n.startSync(runCtx, n.rep.Load())
	}
	n.startContextFiles(n.rep.Load())
	// Team memory (pushes and pulls of shared projects) after device sync, before readiness.
	n.setPhase("starting team memory")
	n.startTeam(runCtx, n.rep.Load(), key)
	srv.SetBackends(n.backends())
	n.ready.Store(true)
	n.setPhase("ready")
	n.log.Info("node ready", "addr", n.Addr(), "pid", os.Getpid())
	// The full integrity check the open leaves out runs now, in the background.
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.checkInBackground(runCtx, n.rep.Load())
	}()
	n.pipe.Load().Start()
	n.startEmbed(n.rep.Load(), n.searchSvc.Load())
	// A hook that could not reach the node (while it was starting, say) spools its event;
	// the spool is read at start and then again every spoolRescan. The change feed cannot
	// replace this poll: spool files are written by hook processes, not by commits.
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		t := time.NewTicker(spoolRescan)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
				if n.corruption() == nil { // events spooled now wait for the repair
					n.replaySpool(runCtx)
				}
			}
		}
	}()
	return nil
}

// backends are what the API serves once the node is ready: the search service, and device
// sync and team memory — or why they did not start.
func (n *Node) backends() api.Backends {
	b := api.Backends{Search: n.searchSvc.Load()}
	if sn := n.sync.Load(); sn != nil {
		b.Peers = sn
	} else if e := n.syncErr.Load(); e != nil {
		b.PeersErr = errors.New(*e)
	}
	if t := n.team.Load(); t != nil {
		b.Team = t
	} else if e := n.teamErr.Load(); e != nil {
		b.TeamErr = errors.New(*e)
	}
	return b
}

// WaitReady blocks until the node is ready or ctx ends.
func (n *Node) WaitReady(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for !n.Ready() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// openDatabase opens the replica (quick_check and migrations included), replays the
// spool and installs search.
func (n *Node) openDatabase(ctx context.Context) error {
	if n.cfg.OpenDelay > 0 {
		t := time.NewTimer(n.cfg.OpenDelay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	path := datadir.Dir(n.cfg.DataDir).DB()
	rep, err := replica.Open(ctx, replica.Config{
		Path:      path,
		Origin:    n.origin,
		LocalOnly: globMatcher(n.cfg.Settings.LocalOnlyProjects),
		Logger:    n.log,
		Now:       n.cfg.Now,
		FsyncAcks: n.cfg.Settings.FsyncAcks,
		Feed:      n.feed,
		Phase:     n.setPhase,
	})
	if err != nil {
		if errors.Is(err, replica.ErrCorrupt) {
			return fmt.Errorf("open database %s: %w; 'memnode repair' recovers what is readable (README: Troubleshooting)", path, err)
		}
		if errors.Is(err, replica.ErrLocked) {
			who := sqliteUsers(path)
			if who == "" {
				who = "another program"
			}
			return fmt.Errorf("open database %s: %w; it is held open by %s: end its transaction or stop it, then start memnode again", path, err, who)
		}
		return fmt.Errorf("open database %s: %w", path, err)
	}
	n.rep.Store(rep)
	pipe, err := pipeline.New(pipeline.Config{
		Store: rep, Compressor: n.cfg.Compressor, Workers: n.cfg.Settings.Workers,
		Policy: memory.Policy{ExcludedProjects: n.cfg.Settings.ExcludedProjects, SkipTools: n.cfg.Settings.SkipTools},
		Linger: n.cfg.Linger, MaxDefer: n.cfg.MaxDefer, DeferCap: n.cfg.DeferCap,
		Background: prio.Lower, Broken: replica.IsCorrupt, Now: n.cfg.Now, Logger: n.log,
	})
	if err != nil {
		return err
	}
	n.pipe.Store(pipe)
	n.setPhase("replaying spooled events")
	n.replaySpool(ctx)
	n.searchSvc.Store(search.NewService(rep, search.Config{}))
	return ctx.Err()
}

// spoolRescan is how often the node looks for events hooks spooled while it was running.
const spoolRescan = 2 * time.Second

// replaySpool ingests the events hooks spooled; what fails stays spooled for the next try.
func (n *Node) replaySpool(ctx context.Context) {
	replayed, err := hooks.DrainSpool(n.cfg.DataDir, func(evs []apitype.Event) error {
		for _, ev := range evs {
			if _, err := n.Ingest(ctx, ev); err != nil && !errors.Is(err, memory.ErrInvalid) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		if ctx.Err() == nil {
			n.log.Error("spool replay failed; it will be retried", "err", err)
		}
	} else if replayed > 0 {
		n.log.Info("replayed spooled events", "count", replayed)
	}
}

// Close stops the node in order and waits for every part; it is idempotent. A start in
// progress is aborted first: when Close returns nothing runs and Ready is false.
func (n *Node) Close(ctx context.Context) error {
	n.closeMu.Lock()
	if n.closed {
		n.closeMu.Unlock()
		return nil
	}
	n.closed = true
	cancelStart, startDone := n.cancelStart, n.startDone
	n.closeMu.Unlock()
	if startDone != nil {
		cancelStart()
		<-startDone // Start has returned: the parts that exist stay as they are
	}
	return n.stop(ctx)
}

// stop closes the parts that exist, in reverse start order: intake (API) → the group
// (sync, libp2p) → team memory → workers (a claimed batch is committed or released) → embedding worker →
// replica → pid file and lock. Only Start (on failure) and Close call it, one at a time.
func (n *Node) stop(ctx context.Context) error {
	var errs []error
	if srv := n.api.Load(); srv != nil {
		errs = append(errs, srv.Close(ctx))      // idempotent; kept for Addr
		errs = append(errs, n.viewerAuth.Save()) // each session's last use, for the next start
	}
	n.ready.Store(false)
	n.imports.stop() // before the replica closes: it writes through the API, closed above
	if sn := n.sync.Swap(nil); sn != nil {
		errs = append(errs, sn.Close())
	}
	if t := n.team.Swap(nil); t != nil {
		errs = append(errs, t.Close()) // its last push or pull ends before the replica closes
	}
	if n.cancel != nil {
		n.cancel()
	}
	n.wg.Wait()
	if p := n.pipe.Swap(nil); p != nil {
		errs = append(errs, p.Close())
	}
	if w := n.ctxFiles.Swap(nil); w != nil {
		errs = append(errs, w.Close())
	}
	if w := n.embedW.Swap(nil); w != nil {
		errs = append(errs, w.Close())
	}
	n.searchSvc.Store(nil)
	if rep := n.rep.Swap(nil); rep != nil {
		errs = append(errs, rep.Close())
	}
	n.feed.Close()
	if n.lockF != nil {
		// Remove the pid file only while we still hold the lock: it is ours.
		if n.pidWritten {
			os.Remove(datadir.Dir(n.cfg.DataDir).PID())
			n.pidWritten = false
		}
		errs = append(errs, n.lockF.Close())
		n.lockF = nil
	}
	return errors.Join(errs...)
}

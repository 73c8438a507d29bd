// Package pipeline is the node's event→record path: Ingest validates a hook event, asks
// the recording policy, cleans it again and queues it durably; workers claim one session's
// events at a time, turn them into one batch of records (Build: compressor, record
// building, the second privacy pass) and commit it with the removal of its queue rows.
package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// Queue is what the pipeline needs of the durable event queue: add an event, and take one
// session's events at a time, handed back (with an attempt counted) when processing fails.
type Queue interface {
	Enqueue(ctx context.Context, ev store.PendingEvent) (dup bool, err error)
	QueueDepth(ctx context.Context) (int, error)
	LastQueuedPrompt(ctx context.Context, sessionID string) (store.PendingEvent, bool, error)
	// ForgetEpoch moves whenever a forget committed: the pipeline's cache of which
	// sessions' turns are private is valid only while it stays.
	ForgetEpoch() uint64
	ClaimSession(ctx context.Context, max int) (store.Claim, error)
	Release(ctx context.Context, ids []int64) error
	Unclaim(sessionID string)
}

// Sessions is what building records needs to read: the session's local state and its
// earlier observations (a summary sees them all).
type Sessions interface {
	SessionState(ctx context.Context, id string) (store.SessionState, bool, error)
	SessionObservations(ctx context.Context, sessionID string, limit int) ([]memory.Observation, error)
}

// Store is the queue and the records side the workers commit to.
type Store interface {
	Queue
	Sessions
	Commit(ctx context.Context, b *store.Batch) (store.CommitResult, error)
}

// Defaults of Config.
const (
	// DefaultLinger is how long the queue must have been quiet (no new hook event) before a
	// worker claims: events arriving together are compressed and committed together.
	DefaultLinger = 50 * time.Millisecond
	// While hook events keep arriving, workers hold back — a hook's acknowledgement is what
	// the IDE waits for, compression is not — but never longer than DefaultMaxDefer at a
	// time, and not at all once DefaultDeferCap events wait.
	DefaultMaxDefer = 5 * time.Second
	DefaultDeferCap = 20000
)

// claimBatch bounds how many events of one session one worker takes at a time; it is also
// the largest batch of tool calls a compressor sees in one call (providers split it further
// by size).
const claimBatch = 256

// Config configures a Pipeline.
type Config struct {
	Store      Store
	Compressor ai.Compressor
	// Policy decides what is recorded (the hook asks the same Policy first).
	Policy memory.Policy
	// Workers is the number of queue workers (at least 1).
	Workers int
	// Linger, MaxDefer and DeferCap decide when workers run while hook events keep
	// arriving; zero means the defaults.
	Linger, MaxDefer time.Duration
	DeferCap         int
	// Background is called on each worker's thread before it starts (prio.Lower: workers
	// yield the CPU to hooks, context and search); nil means none. The commit itself runs
	// at normal priority (prio.Unlowered).
	Background func() error
	// Broken reports whether a store error means the store can keep nothing more (a
	// corrupt database: replica.IsCorrupt). After such an error the workers stop and Ingest
	// refuses events with memory.ErrCorrupt, so nothing is acknowledged that cannot be
	// kept; Broken() says why. Nil: no error is final.
	Broken func(error) bool
	Now    func() time.Time
	Logger *slog.Logger
}

// Stats counts what the pipeline did since it was made.
type Stats struct {
	Ingested, Processed, Observations, Summaries, Failures int64
	// StorageFull: the last event could not be queued because the disk is full.
	StorageFull bool
}

// Pipeline is the event→record path of one node. New → Ingest (at once) → Start (workers)
// → Close.
type Pipeline struct {
	cfg  Config
	log  *slog.Logger
	kick chan struct{}
	// lastEnqueue is when a hook event was last queued, or the workers started (UnixNano, by
	// Config.Now): workers hold back while events keep arriving (see settle).
	lastEnqueue atomic.Int64

	// policy is cfg.Policy until SetPolicy replaces it (settings applied while running).
	policy atomic.Pointer[memory.Policy]

	ingested, processed, observations, summaries, failures atomic.Int64
	storageFull                                            atomic.Bool
	broken                                                 atomic.Pointer[error]

	// turns caches turnPrivate's answer per session, filled at turnsEpoch (Store's
	// ForgetEpoch): a tool call or answer then costs no queue or session read.
	turnsMu    sync.Mutex
	turns      map[string]bool
	turnsEpoch uint64

	// recent holds the latest tool calls by session and tool use ID, for a failure that
	// names only its call (apitype.ToolFailedStep).
	recent recentCalls

	mu      sync.Mutex
	started bool
	closed  bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a pipeline over cfg.Store; it starts nothing.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Store == nil || cfg.Compressor == nil {
		return nil, errors.New("pipeline: store and compressor required")
	}
	if cfg.Workers < 1 {
		cfg.Workers = 1
	}
	if cfg.Linger <= 0 {
		cfg.Linger = DefaultLinger
	}
	if cfg.MaxDefer <= 0 {
		cfg.MaxDefer = DefaultMaxDefer
	}
	if cfg.DeferCap <= 0 {
		cfg.DeferCap = DefaultDeferCap
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Pipeline{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1)}
	p.policy.Store(&cfg.Policy)
	return p, nil
}

// SetPolicy replaces what is recorded from the next event on (excluded projects and skipped
// tools changed in the settings while the node runs).
func (p *Pipeline) SetPolicy(pol memory.Policy) { p.policy.Store(&pol) }

// Start starts the workers; queued events (earlier runs' too) are processed from now on.
func (p *Pipeline) Start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started || p.closed {
		return
	}
	p.started = true
	// Start counts as the last event: the workers settle for one Linger first, as they do
	// after every event (with a test clock held still, they hold back until it moves).
	p.lastEnqueue.CompareAndSwap(0, p.cfg.Now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	for range p.cfg.Workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.worker(ctx)
		}()
	}
	p.notify()
}

// Close stops the workers and waits for them: a claimed batch is committed or released.
// It is idempotent; Ingest keeps working after it (the store decides).
func (p *Pipeline) Close() error {
	p.mu.Lock()
	p.closed = true
	cancel := p.cancel
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	p.wg.Wait()
	return nil
}

// Stats returns the counters.
func (p *Pipeline) Stats() Stats {
	return Stats{Ingested: p.ingested.Load(), Processed: p.processed.Load(), Observations: p.observations.Load(),
		Summaries: p.summaries.Load(), Failures: p.failures.Load(), StorageFull: p.storageFull.Load()}
}

// Broken returns the store error that stopped the pipeline (see Config.Broken), or nil.
func (p *Pipeline) Broken() error {
	if e := p.broken.Load(); e != nil {
		return *e
	}
	return nil
}

// check latches err when it means the store is broken, and returns it.
func (p *Pipeline) check(err error) error {
	if err != nil && p.cfg.Broken != nil && p.cfg.Broken(err) && p.broken.CompareAndSwap(nil, &err) {
		p.log.Error("the database is corrupt: no more events are taken", "err", err)
	}
	return err
}

// notify wakes one idle worker.
func (p *Pipeline) notify() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

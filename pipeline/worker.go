package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/memnode/memnode/internal/prio"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// settleCheck is how often a worker waiting for a burst to end looks again.
const settleCheck = 25 * time.Millisecond

// worker claims one session's events at a time, turns them into records and commits them
// together with the removal of the queue rows: an event is either still queued or stored.
// It stops once the store is broken (Config.Broken): going on would fail on the same events
// again and again; they stay queued for after the repair.
func (p *Pipeline) worker(ctx context.Context) {
	if p.cfg.Background != nil {
		if err := p.cfg.Background(); err != nil {
			p.log.Debug("worker keeps normal CPU priority", "err", err)
		}
	}
	st := p.cfg.Store
	idle := time.NewTicker(500 * time.Millisecond)
	defer idle.Stop()
	backoff := time.Duration(0)
	for p.Broken() == nil {
		// Before every claim, also in a backlog: hooks arriving now come first.
		if err := p.settle(ctx); err != nil {
			return
		}
		c, err := st.ClaimSession(ctx, claimBatch)
		if p.check(err) != nil {
			if ctx.Err() != nil {
				return
			}
			p.log.Error("claim failed", "err", err)
		}
		if len(c.Events) > 0 {
			p.notify() // there may be more work for the other workers
			err := p.check(p.process(ctx, c.Events))
			if err != nil {
				p.failures.Add(1)
				ids := make([]int64, len(c.Events))
				for i, e := range c.Events {
					ids[i] = e.ID
				}
				// A full disk is not the events' fault: no attempt is counted against them.
				if !errors.Is(err, memory.ErrStorageFull) && ctx.Err() == nil {
					if rerr := st.Release(context.Background(), ids); rerr != nil {
						p.log.Error("release failed", "err", rerr)
					}
				}
			}
			st.Unclaim(c.SessionID)
			if err == nil {
				backoff = 0
				continue
			}
			if ctx.Err() != nil {
				return
			}
			p.log.Warn("processing failed; events stay queued, each set aside after its last attempt", "session", short(c.SessionID), "events", len(c.Events), "max_attempts", store.MaxAttempts, "err", err)
			backoff = min(max(backoff*2, 100*time.Millisecond), 30*time.Second)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		case <-idle.C:
		}
	}
}

// settle waits until no hook event has arrived for Linger, so a burst is acknowledged
// first and compressed after, in large batches (one commit, one fsync for many events).
// It returns early once it has waited MaxDefer or DeferCap events wait. Time is Config.Now's,
// so a test that holds its clock still holds the workers back, however slow the machine.
func (p *Pipeline) settle(ctx context.Context) error {
	start := p.cfg.Now()
	for {
		now := p.cfg.Now()
		quiet, waited := now.Sub(time.Unix(0, p.lastEnqueue.Load())), now.Sub(start)
		if quiet >= p.cfg.Linger || waited >= p.cfg.MaxDefer {
			return nil
		}
		if depth, err := p.cfg.Store.QueueDepth(ctx); err == nil && depth >= p.cfg.DeferCap {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(p.cfg.Linger-quiet, p.cfg.MaxDefer-waited, settleCheck)):
		}
	}
}

// staleRebuilds bounds how often one claim is built again because forgets keep changing
// its session (store.ErrStaleClaim); past it the claim is released like any failure.
const staleRebuilds = 5

// process builds one batch from a claim and commits it. A forget that changed the session
// after the claim makes the commit refuse the batch (store.ErrStaleClaim): it is built
// again from the session's state as the forget left it, so a forgotten turn's tool calls
// are dropped as a private turn's are.
func (p *Pipeline) process(ctx context.Context, evs []store.PendingEvent) error {
	var res store.CommitResult
	for try := 0; ; try++ {
		b, err := p.Build(ctx, p.cfg.Store, evs)
		if err != nil {
			return err
		}
		// The commit takes the single writer: at normal priority (prio.Unlowered).
		prio.Unlowered(func() { res, err = p.cfg.Store.Commit(ctx, b) })
		if errors.Is(err, store.ErrStaleClaim) && try < staleRebuilds {
			p.log.Debug("session changed by a forget since the claim; building again", "err", err)
			continue
		}
		if err != nil {
			return err
		}
		break
	}
	p.processed.Add(int64(len(evs)))
	p.observations.Add(int64(len(res.Observations)))
	p.summaries.Add(int64(len(res.Summaries)))
	return nil
}

// short is an ID as a log line shows it: a poison event's may be megabytes long.
func short(id string) string {
	if len(id) > 128 {
		return id[:128] + "…"
	}
	return id
}

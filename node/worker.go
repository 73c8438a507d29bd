package node

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/prio"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/replica"
)

var errNotReady = errors.New("node not ready")

// claimBatch bounds how many events of one session one worker takes at a time; it is also
// the largest batch of tool calls a compressor sees in one call (providers split it further
// by size).
const claimBatch = 256

// linger is how long the queue must have been quiet (no new hook event) before a worker
// claims: events arriving together are compressed and committed together.
const linger = 50 * time.Millisecond

// While hook events keep arriving, workers hold back — a hook's acknowledgement is what
// the IDE waits for, compression is not — but never longer than maxDefer at a time, and
// not at all once deferCap events wait: a sustained flood is processed flat out.
const (
	settleCheck = 25 * time.Millisecond // how often a waiting worker looks again
	maxDefer    = 5 * time.Second
	deferCap    = 20000
)

// queue is what a queue worker needs of the store to take work: one session's events at a
// time, handed back (with an attempt counted) when processing fails.
type queue interface {
	QueueDepth(ctx context.Context) (int, error)
	ClaimSession(ctx context.Context, max int) (replica.Claim, error)
	Release(ctx context.Context, ids []int64) error
	Unclaim(sessionID string)
}

// committer is what turning claimed events into records needs of the store: the session's
// local state and earlier observations, and the commit that stores the batch and completes
// its events.
type committer interface {
	SessionState(ctx context.Context, id string) (replica.SessionState, bool, error)
	SessionObservations(ctx context.Context, sessionID string, limit int) ([]memory.Observation, error)
	Commit(ctx context.Context, b *replica.Batch) (replica.CommitResult, error)
}

var (
	_ queue     = (*replica.Replica)(nil)
	_ committer = (*replica.Replica)(nil)
)

type stats struct {
	ingested     atomic.Int64
	processed    atomic.Int64
	observations atomic.Int64
	summaries    atomic.Int64
	failures     atomic.Int64
	// storageFull: the last event could not be queued because the disk is full.
	storageFull atomic.Bool
}

// worker claims one session's events at a time, turns them into records and commits them
// together with the removal of the queue rows: an event is either still queued or stored.
func (n *Node) worker(ctx context.Context) {
	if err := prio.Lower(); err != nil {
		n.log.Debug("worker keeps normal CPU priority", "err", err)
	}
	idle := time.NewTicker(500 * time.Millisecond)
	defer idle.Stop()
	backoff := time.Duration(0)
	for {
		rep := n.rep.Load()
		// Before every claim, also in a backlog: hooks arriving now come first.
		if err := n.settle(ctx, rep); err != nil {
			return
		}
		c, err := rep.ClaimSession(ctx, claimBatch)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			n.log.Error("claim failed", "err", err)
		}
		if len(c.Events) > 0 {
			n.notify() // there may be more work for the other workers
			err := n.process(ctx, rep, c.Events)
			if err != nil {
				n.stats.failures.Add(1)
				ids := make([]int64, len(c.Events))
				for i, e := range c.Events {
					ids[i] = e.ID
				}
				if rerr := rep.Release(context.Background(), ids); rerr != nil {
					n.log.Error("release failed", "err", rerr)
				}
			}
			rep.Unclaim(c.SessionID)
			if err == nil {
				backoff = 0
				continue
			}
			if ctx.Err() != nil {
				return
			}
			n.log.Warn("processing failed; events stay queued", "session", c.SessionID, "events", len(c.Events), "err", err)
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
		case <-n.kick:
		case <-idle.C:
		}
	}
}

// settle waits until no hook event has arrived for linger, so a burst is acknowledged
// first and compressed after, in large batches (one commit, one fsync for many events).
// It returns early once it has waited MaxDefer or DeferCap events wait (Config).
func (n *Node) settle(ctx context.Context, q queue) error {
	start := time.Now()
	for {
		quiet := time.Since(time.Unix(0, n.lastEnqueue.Load()))
		if quiet >= n.cfg.Linger || time.Since(start) >= n.cfg.MaxDefer {
			return nil
		}
		if depth, err := q.QueueDepth(ctx); err == nil && depth >= n.cfg.DeferCap {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(n.cfg.Linger-quiet, n.cfg.MaxDefer-time.Since(start), settleCheck)):
		}
	}
}

// process turns one session's claimed events, in order, into one batch.
func (n *Node) process(ctx context.Context, rep committer, evs []replica.PendingEvent) error {
	first := evs[0]
	st, known, err := rep.SessionState(ctx, first.SessionID)
	if err != nil {
		return err
	}
	b := &replica.Batch{}
	var calls []ai.ToolCall
	var callEvents []apitype.Event
	var sessionObs []ai.Observation // observations of this session made in this batch

	flush := func() error {
		if len(calls) == 0 {
			return nil
		}
		obs, usage, err := n.cfg.Compressor.Observe(ctx, calls)
		if err != nil {
			return err
		}
		perCall := len(obs) == len(calls)
		tokensEach := 0
		if usage.InputTokens+usage.OutputTokens > 0 && len(obs) > 0 {
			tokensEach = (usage.InputTokens + usage.OutputTokens) / len(obs)
		}
		for i, o := range obs {
			ev := callEvents[len(callEvents)-1]
			if perCall {
				ev = callEvents[i]
			}
			disc := tokensEach
			if disc == 0 {
				disc = memory.EstimateTokens(string(ev.ToolInput)) + memory.EstimateTokens(string(ev.ToolResponse))
			}
			b.Observations = append(b.Observations, memory.Observation{
				SessionID: ev.SessionID, Project: ev.Project, Type: o.Type, Title: o.Title, Subtitle: o.Subtitle,
				Narrative: o.Narrative, Facts: o.Facts, Concepts: o.Concepts, FilesRead: o.FilesRead,
				FilesModified: o.FilesModified, ToolName: ev.ToolName, PromptNumber: st.PromptCount,
				DiscoveryTokens: disc, Model: usage.Model, CreatedAt: ev.At.UnixMilli(),
			})
			sessionObs = append(sessionObs, o)
		}
		calls, callEvents = calls[:0], callEvents[:0]
		return nil
	}

	for _, pe := range evs {
		var ev apitype.Event
		if err := json.Unmarshal(pe.Payload, &ev); err != nil {
			// Cannot happen for events we queued; drop it rather than block the session.
			n.log.Error("undecodable queued event dropped", "id", pe.ID, "err", err)
			b.Done = append(b.Done, pe.ID)
			continue
		}
		if !known && ev.Kind == memory.KindSessionEnd {
			// A session that ends before anything happened in it (`claude mcp list`) is
			// not a session worth remembering: no empty session from a lone SessionEnd.
			b.Done = append(b.Done, pe.ID)
			b.DoneEvents = append(b.DoneEvents, pe.EventID)
			continue
		}
		if !known {
			b.Sessions = append(b.Sessions, memory.Session{ID: ev.SessionID, Project: ev.Project, Platform: ev.Platform, StartedAt: ev.At.UnixMilli(), Status: "active"})
			known = true
		}
		switch ev.Kind {
		case memory.KindPrompt:
			if err := flush(); err != nil {
				return err
			}
			st.PromptCount++
			st.TurnPrivate = ev.Private
			if !ev.Private && ev.Prompt != "" {
				st.LastPrompt = ev.Prompt
				if st.FirstPrompt == "" {
					st.FirstPrompt = ev.Prompt
				}
				b.Prompts = append(b.Prompts, memory.Prompt{SessionID: ev.SessionID, Project: ev.Project,
					PromptNumber: st.PromptCount, Text: ev.Prompt, CreatedAt: ev.At.UnixMilli()})
			}
		case memory.KindObservation:
			if st.TurnPrivate {
				break // the whole prompt of this turn was private: so are its tool calls
			}
			calls = append(calls, ai.ToolCall{SessionID: ev.SessionID, Project: ev.Project, Cwd: ev.Cwd,
				ToolName: ev.ToolName, ToolInput: ev.ToolInput, ToolResponse: ev.ToolResponse, Prompt: st.LastPrompt, At: ev.At})
			callEvents = append(callEvents, ev)
		case memory.KindSummarize:
			if err := flush(); err != nil {
				return err
			}
			if ev.LastAssistantMessage == "" {
				break
			}
			answer := ev.LastAssistantMessage
			if st.TurnPrivate {
				// A wholly private turn: its answer repeats the prompt, so nothing of this
				// turn is summarised; the rest of the session still is.
				answer = ""
			}
			in := ai.SessionInput{SessionID: ev.SessionID, Project: ev.Project, Request: st.FirstPrompt, LastAssistantMessage: answer}
			prev, err := rep.SessionObservations(ctx, ev.SessionID, 200)
			if err != nil {
				return err
			}
			for _, o := range prev {
				in.Observations = append(in.Observations, ai.Observation{Type: o.Type, Title: o.Title, Subtitle: o.Subtitle,
					Facts: o.Facts, FilesRead: o.FilesRead, FilesModified: o.FilesModified})
			}
			in.Observations = append(in.Observations, sessionObs...)
			if answer == "" && len(in.Observations) == 0 {
				break
			}
			sum, usage, err := n.cfg.Compressor.Summarize(ctx, in)
			if err != nil {
				return err
			}
			b.Summaries = append(b.Summaries, memory.Summary{SessionID: ev.SessionID, Project: ev.Project,
				Request: sum.Request, Investigated: sum.Investigated, Learned: sum.Learned, Completed: sum.Completed,
				NextSteps: sum.NextSteps, Notes: sum.Notes, DiscoveryTokens: usage.InputTokens + usage.OutputTokens,
				Model: usage.Model, CreatedAt: ev.At.UnixMilli()})
		case memory.KindSessionEnd:
			if err := flush(); err != nil {
				return err
			}
			b.Sessions = append(b.Sessions, memory.Session{ID: ev.SessionID, Project: ev.Project, Platform: ev.Platform,
				StartedAt: ev.At.UnixMilli(), EndedAt: ev.At.UnixMilli(), Status: "ended"})
		}
		b.Done = append(b.Done, pe.ID)
		b.DoneEvents = append(b.DoneEvents, pe.EventID)
	}
	if err := flush(); err != nil {
		return err
	}
	b.States = append(b.States, st)
	cleanBatch(b)
	if k := b.ClipOversized(); k > 0 {
		n.log.Warn("records clipped to the record size limit", "records", k, "limit_bytes", replica.MaxRecordSize)
	}
	// The commit takes the single writer: at normal priority (prio.Unlowered).
	var res replica.CommitResult
	prio.Unlowered(func() { res, err = rep.Commit(ctx, b) })
	if err != nil {
		return err
	}
	n.stats.processed.Add(int64(len(evs)))
	n.stats.observations.Add(int64(len(res.Observations)))
	n.stats.summaries.Add(int64(len(res.Summaries)))
	return nil
}

// cleanBatch is the second guard for records built from events: the events were cleaned,
// but a record joins their parts and adds the compressor's words, so every record passes
// the same gate as an import before it is stored.
func cleanBatch(b *replica.Batch) {
	for i := range b.Sessions {
		privacy.CleanSession(&b.Sessions[i])
	}
	for i := range b.Prompts {
		privacy.CleanPrompt(&b.Prompts[i])
	}
	for i := range b.Observations {
		privacy.CleanObservation(&b.Observations[i])
	}
	for i := range b.Summaries {
		privacy.CleanSummary(&b.Summaries[i])
	}
}

package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/store"
)

var knownKinds = []string{memory.KindSessionStart, memory.KindPrompt, memory.KindObservation, memory.KindSummarize, memory.KindSessionEnd}

// Ingest validates an event, asks the recording policy, cleans it again (the node's second
// privacy guard) and queues it durably. When it returns without error the event survives a
// crash. Invalid events are memory.ErrInvalid; a full disk is memory.ErrStorageFull.
func (p *Pipeline) Ingest(ctx context.Context, ev apitype.Event) (apitype.EventReply, error) {
	if err := p.Broken(); err != nil {
		return apitype.EventReply{}, fmt.Errorf("ingest: %w: %w", memory.ErrCorrupt, err)
	}
	if !slices.Contains(knownKinds, ev.Kind) {
		return apitype.EventReply{}, fmt.Errorf("%w: unknown event kind %q", memory.ErrInvalid, ev.Kind)
	}
	if ev.SessionID == "" || ev.Project == "" {
		return apitype.EventReply{}, fmt.Errorf("%w: session_id and project are required", memory.ErrInvalid)
	}
	// An ID no agent makes (a 20 MiB session_id) is refused here, not retried forever.
	if len(ev.SessionID) > memory.MaxSessionIDBytes || len(ev.EventID) > memory.MaxSessionIDBytes || len(ev.Project) > memory.MaxProjectBytes {
		return apitype.EventReply{}, fmt.Errorf("%w: session_id or event_id over %d bytes, or project over %d bytes", memory.ErrInvalid, memory.MaxSessionIDBytes, memory.MaxProjectBytes)
	}
	ev.Platform = memory.PlatformName(ev.Platform) // claude-mem's "claude" is claude-code
	if ev.EventID == "" {
		ev.EventID = memory.NewEventID()
	}
	now := p.cfg.Now()
	if ev.At.IsZero() {
		ev.At = now
	}
	// A time far ahead would pin the record first in "recent" forever (and sync it so).
	if latest := now.Add(memory.MaxFutureAt); ev.At.After(latest) {
		ev.At = latest
	}
	pol := p.policy.Load()
	if pol.ProjectExcluded(ev.Project) {
		return apitype.EventReply{OK: true, Status: "skipped", Reason: "project excluded"}, nil
	}
	if ev.Kind == memory.KindObservation && pol.ToolSkipped(ev.ToolName) {
		return apitype.EventReply{OK: true, Status: "skipped", Reason: "tool skipped"}, nil
	}
	// The hook's rule for a wholly private turn, for every client: its prompt is kept as a
	// marker only, its tool calls are never queued, and its answer (which repeats the
	// private text) is dropped before the queue — the summarize event itself is kept, so
	// the session's earlier turns are still summarised.
	whollyPrivate := ev.Kind == memory.KindPrompt && strings.TrimSpace(ev.Prompt) != "" && privacy.IsEmptyAfterClean(ev.Prompt)
	if ev.Kind == memory.KindObservation || ev.Kind == memory.KindSummarize {
		private, err := p.turnPrivate(ctx, ev.SessionID)
		if err != nil {
			return apitype.EventReply{}, fmt.Errorf("ingest: %w", err)
		}
		if private && ev.Kind == memory.KindObservation {
			return apitype.EventReply{OK: true, Status: "skipped", Reason: "private turn"}, nil
		}
		if private {
			ev.LastAssistantMessage, ev.Private = "", true
		}
	}
	if err := cleanEvent(&ev); err != nil {
		return apitype.EventReply{}, fmt.Errorf("%w: %w", memory.ErrInvalid, err)
	}
	if ev.SessionID == "" {
		return apitype.EventReply{}, fmt.Errorf("%w: session_id is empty once cleaned", memory.ErrInvalid)
	}
	if whollyPrivate {
		ev.Prompt, ev.Private = "", true
	}
	payload, err := json.Marshal(newQueueRow(ev))
	if err != nil {
		return apitype.EventReply{}, fmt.Errorf("ingest: %w", err)
	}
	epoch := p.cfg.Store.ForgetEpoch()
	// Before the row exists: a worker that sees it also sees the burst is still going.
	p.lastEnqueue.Store(p.cfg.Now().UnixNano())
	dup, err := p.cfg.Store.Enqueue(ctx, store.PendingEvent{
		EventID: ev.EventID, Kind: ev.Kind, SessionID: ev.SessionID, Project: ev.Project,
		Payload: payload, CreatedAt: ev.At.UnixMilli(),
	})
	// A full disk refuses the event (the API answers 507, the hook spools or fails loud);
	// the next event that fits clears it: recovery needs nothing but space.
	p.storageFull.Store(errors.Is(err, memory.ErrStorageFull))
	if p.check(err) != nil {
		if p.Broken() != nil {
			return apitype.EventReply{}, fmt.Errorf("ingest: %w: %w", memory.ErrCorrupt, err)
		}
		return apitype.EventReply{}, fmt.Errorf("ingest: %w", err)
	}
	p.ingested.Add(1)
	p.notify()
	if dup {
		return apitype.EventReply{OK: true, Status: "duplicate"}, nil
	}
	if ev.Kind == memory.KindPrompt {
		p.rememberTurn(ev.SessionID, ev.Private, epoch) // the session's latest queued prompt now
	}
	return apitype.EventReply{OK: true, Status: "queued"}, nil
}

// maxCachedTurns bounds the private-turn cache; past it the cache starts again (a node
// sees a few sessions at a time).
const maxCachedTurns = 1024

// turnPrivate reports whether the session's current turn answers a wholly private prompt:
// the latest prompt still queued says so, or else the session's processing state. The
// answer is cached per session: it changes only when this pipeline queues the session's
// next prompt (Ingest updates the cache then) or when a forget makes the turn private,
// which moves the store's ForgetEpoch and empties the cache. A worker's commit of the
// prompt moves the answer from the queue to the session state without changing it.
func (p *Pipeline) turnPrivate(ctx context.Context, sessionID string) (bool, error) {
	epoch := p.cfg.Store.ForgetEpoch()
	p.turnsMu.Lock()
	if p.turnsEpoch != epoch {
		clear(p.turns)
		p.turnsEpoch = epoch
	}
	private, ok := p.turns[sessionID]
	p.turnsMu.Unlock()
	if ok {
		return private, nil
	}
	private, err := p.readTurnPrivate(ctx, sessionID)
	if err != nil {
		return false, err
	}
	p.rememberTurn(sessionID, private, epoch)
	return private, nil
}

// rememberTurn caches a session's turnPrivate answer learned at epoch, unless a forget has
// committed since (the answer may be stale then: the next call reads again).
func (p *Pipeline) rememberTurn(sessionID string, private bool, epoch uint64) {
	p.turnsMu.Lock()
	defer p.turnsMu.Unlock()
	if now := p.cfg.Store.ForgetEpoch(); now != epoch || p.turnsEpoch != epoch {
		return
	}
	if p.turns == nil || len(p.turns) >= maxCachedTurns {
		p.turns = make(map[string]bool)
	}
	p.turns[sessionID] = private
}

// readTurnPrivate is turnPrivate without the cache.
func (p *Pipeline) readTurnPrivate(ctx context.Context, sessionID string) (bool, error) {
	pe, ok, err := p.cfg.Store.LastQueuedPrompt(ctx, sessionID)
	if err != nil {
		return false, err
	}
	if ok {
		prompt, err := decodeQueueRow(pe.Payload)
		if err != nil {
			return false, fmt.Errorf("queued prompt: %w", err)
		}
		return prompt.Private, nil
	}
	st, _, err := p.cfg.Store.SessionState(ctx, sessionID)
	if err != nil {
		return false, err
	}
	return st.TurnPrivate, nil
}

// cleanEvent is the node's second guard: every free-text field passes the privacy filter
// again, whatever the hook did.
func cleanEvent(ev *apitype.Event) error {
	for _, s := range []*string{&ev.SessionID, &ev.Prompt, &ev.LastAssistantMessage, &ev.Reason, &ev.Cwd, &ev.Project, &ev.ToolName} {
		*s = privacy.Clean(*s)
	}
	if len(ev.ToolInput) == 0 && len(ev.ToolResponse) == 0 {
		return nil
	}
	// One record, two parts: cleaned as one text, as the hook does.
	parts, err := privacy.CleanJSONParts(ev.ToolInput, ev.ToolResponse)
	if err != nil {
		return fmt.Errorf("tool payload: %w", err)
	}
	for i, raw := range []*json.RawMessage{&ev.ToolInput, &ev.ToolResponse} {
		if len(*raw) > 0 {
			*raw = parts[i]
		}
	}
	return nil
}

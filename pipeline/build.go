package pipeline

import (
	"context"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/store"
)

// Build turns one session's claimed events, in order, into one batch: sessions, prompts,
// the compressor's observations and summaries, each record cleaned again and clipped to the
// record size limit, and the events' queue rows marked done. It reads only the session's
// state and earlier observations; storing the batch is the caller's.
func (p *Pipeline) Build(ctx context.Context, rep Sessions, evs []store.PendingEvent) (*store.Batch, error) {
	first := evs[0]
	st, known, err := rep.SessionState(ctx, first.SessionID)
	if err != nil {
		return nil, err
	}
	// Commit checks nothing changed this state (a forget) before it stores what follows.
	b := &store.Batch{Claimed: []store.SessionState{st}}
	var calls []ai.ToolCall
	var callEvents []queueRow
	var sessionObs []ai.Observation // observations of this session made in this batch

	flush := func() error {
		if len(calls) == 0 {
			return nil
		}
		obs, usage, err := p.cfg.Compressor.Observe(ctx, calls)
		if err != nil {
			return err
		}
		perCall := len(obs) == len(calls)
		tokensEach := 0
		if usage.InputTokens+usage.OutputTokens > 0 && len(obs) > 0 {
			tokensEach = (usage.InputTokens + usage.OutputTokens) / len(obs)
		}
		for i, o := range obs {
			ev := sourceCall(o, i, perCall, callEvents)
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
		ev, err := decodeQueueRow(pe.Payload)
		if err != nil {
			// Cannot happen for events we queued; drop it rather than block the session.
			p.log.Error("undecodable queued event dropped", "id", pe.ID, "err", err)
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
				return nil, err
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
			p.recent.pair(&ev)
			calls = append(calls, ai.ToolCall{SessionID: ev.SessionID, Project: ev.Project, Cwd: ev.Cwd,
				ToolName: ev.ToolName, ToolInput: ev.ToolInput, ToolResponse: ev.ToolResponse, Prompt: st.LastPrompt, At: ev.At})
			callEvents = append(callEvents, ev)
		case memory.KindSummarize:
			if err := flush(); err != nil {
				return nil, err
			}
			if ev.LastAssistantMessage == "" && !ev.Private {
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
				return nil, err
			}
			for _, o := range prev {
				in.Observations = append(in.Observations, ai.Observation{Type: o.Type, Title: o.Title, Subtitle: o.Subtitle,
					Facts: o.Facts, FilesRead: o.FilesRead, FilesModified: o.FilesModified})
			}
			in.Observations = append(in.Observations, sessionObs...)
			if answer == "" && len(in.Observations) == 0 {
				break
			}
			sum, usage, err := p.cfg.Compressor.Summarize(ctx, in)
			if err != nil {
				return nil, err
			}
			b.Summaries = append(b.Summaries, memory.Summary{SessionID: ev.SessionID, Project: ev.Project,
				Request: sum.Request, Investigated: sum.Investigated, Learned: sum.Learned, Completed: sum.Completed,
				NextSteps: sum.NextSteps, Notes: sum.Notes, DiscoveryTokens: usage.InputTokens + usage.OutputTokens,
				Model: usage.Model, CreatedAt: ev.At.UnixMilli()})
		case memory.KindSessionEnd:
			if err := flush(); err != nil {
				return nil, err
			}
			b.Sessions = append(b.Sessions, memory.Session{ID: ev.SessionID, Project: ev.Project, Platform: ev.Platform,
				StartedAt: ev.At.UnixMilli(), EndedAt: ev.At.UnixMilli(), Status: "ended"})
		}
		b.Done = append(b.Done, pe.ID)
		b.DoneEvents = append(b.DoneEvents, pe.EventID)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	b.States = append(b.States, st)
	cleanBatch(b)
	if k := b.ClipOversized(); k > 0 {
		p.log.Warn("records clipped to the record size limit", "records", k, "limit_bytes", memory.MaxRecordSize)
	}
	return b, nil
}

// cleanBatch is the second guard for records built from events: the events were cleaned,
// but a record joins their parts and adds the compressor's words, so every record passes
// the same gate as an import before it is stored.
func cleanBatch(b *store.Batch) {
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

// sourceCall is the call an observation is recorded under (its tool, time, session): the one
// the compressor names (ai.Observation.Call), else the i-th when it made one observation per
// call. Otherwise the observation may cover several calls: it takes the last one's time, and
// its tool only when every call used the same one — never another call's tool, which would
// misname where its words come from (a tool's output shown as a note said to memnode).
func sourceCall(o ai.Observation, i int, perCall bool, calls []queueRow) queueRow {
	switch {
	case o.Call >= 1 && o.Call <= len(calls):
		return calls[o.Call-1]
	case perCall:
		return calls[i]
	}
	ev := calls[len(calls)-1]
	for _, c := range calls {
		if c.ToolName != ev.ToolName {
			ev.ToolName = ""
			break
		}
	}
	return ev
}

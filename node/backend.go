package node

import (
	"context"
	"fmt"
	"os"

	"github.com/memnode/memnode/ai/llm"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/inject"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/pipeline"
)

// Context renders the memory a new session of project starts with.
func (n *Node) Context(ctx context.Context, project, sessionID string) (string, error) {
	rep := n.rep.Load()
	if rep == nil {
		return "", errNotReady
	}
	s := n.cfg.Settings
	lim := inject.Limits{Observations: s.ContextObservations, Full: s.ContextFullCount, Sessions: s.ContextSessions, PinnedTokens: s.ContextPinnedTokens}
	in, err := inject.Read(ctx, rep, project, lim)
	if err != nil {
		return "", n.checkCorrupt(err)
	}
	in.Now, in.Location = n.cfg.Now(), n.cfg.Location
	if s.ContextViewerLink {
		in.ViewerURL = "http://" + n.Addr() + "/"
	}
	ids := make([]string, 0, len(in.Observations)+len(in.Pinned))
	for _, o := range in.Observations {
		ids = append(ids, o.ID)
	}
	for _, o := range in.Pinned {
		ids = append(ids, o.ID)
	}
	if in.ShortIDs, err = rep.ShortIDs(ctx, ids); err != nil {
		return "", n.checkCorrupt(err)
	}
	return inject.Render(in, lim), nil
}

// ObservationsByFile serves the file-context hook.
func (n *Node) ObservationsByFile(ctx context.Context, project string, paths []string, limit int) ([]apitype.FileObservation, error) {
	rep := n.rep.Load()
	if rep == nil {
		return nil, errNotReady
	}
	obs, err := rep.ObservationsByFile(ctx, project, paths, limit)
	if err != nil {
		return nil, n.checkCorrupt(err)
	}
	ids := make([]string, len(obs))
	for i, o := range obs {
		ids[i] = o.ID
	}
	short, err := rep.ShortIDs(ctx, ids)
	if err != nil {
		return nil, n.checkCorrupt(err)
	}
	out := make([]apitype.FileObservation, 0, len(obs))
	for _, o := range obs {
		out = append(out, apitype.FileObservation{ID: o.ID, Short: short[o.ID], SessionID: o.SessionID, Type: o.Type, Title: o.Title,
			CreatedAt: o.CreatedAt, FilesRead: nonNil(o.FilesRead), FilesModified: nonNil(o.FilesModified)})
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// aiReporter is implemented by compressors that track provider usage (llm.Chain).
type aiReporter interface {
	Stats() []llm.ProviderStats
	BudgetLeft() int64
}

// Status reports the node's state.
func (n *Node) Status(ctx context.Context) (apitype.Status, error) {
	rep := n.rep.Load()
	if rep == nil {
		return apitype.Status{}, errNotReady
	}
	c, err := rep.Counts(ctx)
	if n.checkCorrupt(err) != nil && n.corruption() == nil {
		return apitype.Status{}, fmt.Errorf("status: %w", err)
	}
	var ps pipeline.Stats
	if p := n.pipe.Load(); p != nil {
		ps = p.Stats()
	}
	dead, derr := rep.DeadLetters(ctx)
	if derr != nil {
		n.log.Warn("count dead letters", "err", derr)
	}
	st := apitype.Status{
		PID: os.Getpid(), Version: n.cfg.Version, DataDir: n.cfg.DataDir, Addr: n.Addr(),
		Socket: localnet.SocketPath(n.cfg.DataDir), Origin: rep.Origin(), Ready: n.Ready(),
		Records: apitype.RecordCounts{Sessions: c.Sessions, Prompts: c.Prompts, Observations: c.Observations,
			Summaries: c.Summaries, Ops: c.Ops, Tombstones: c.Tombstones},
		Queue:      apitype.QueueStatus{Waiting: c.Pending, Ingested: ps.Ingested, Processed: ps.Processed, Failures: ps.Failures, Dead: dead},
		Compressor: apitype.CompressorStatus{Name: n.cfg.Compressor.Name()},
		Embed:      n.embedStatus(),
		Sync:       apitype.SyncStatus{State: n.syncSummary(ctx)},
		Storage:    n.storageStatus(ps),
		Team:       n.teamSummary(ctx),
	}
	if err := n.corruption(); err != nil {
		st.Storage = corruptStatus(err)
	}
	if err := n.api.Load().TCPError(); err != nil {
		st.TCPError = err.Error()
	}
	if r, ok := n.cfg.Compressor.(aiReporter); ok {
		st.Compressor.AI = &apitype.AIStatus{BudgetLeft: r.BudgetLeft(), Providers: []apitype.ProviderStatus{}}
		for _, p := range r.Stats() {
			ps := apitype.ProviderStatus{Name: p.Name, Model: p.Model, Calls: p.Calls, InputTokens: p.InputTokens,
				OutputTokens: p.OutputTokens, DisabledUntil: p.DisabledUntil, LastError: p.LastError}
			for class, k := range p.Errors {
				if ps.Errors == nil {
					ps.Errors = map[string]int64{}
				}
				ps.Errors[string(class)] = k
			}
			st.Compressor.AI.Providers = append(st.Compressor.AI.Providers, ps)
		}
	}
	return st, nil
}

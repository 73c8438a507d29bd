package node

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/memnode/memnode/ai/llm"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/capture"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/inject"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/pipeline"
	"github.com/memnode/memnode/replica"
)

// Context renders the memory a new session of project starts with, for the agent (a welcome
// block when the project has none yet, the health notice when something is degraded) and
// one line for the user.
func (n *Node) Context(ctx context.Context, project, sessionID string) (apitype.Context, error) {
	rep := n.rep.Load()
	if rep == nil {
		return apitype.Context{}, errNotReady
	}
	in, lim, err := n.contextInput(ctx, rep, project)
	if err != nil {
		return apitype.Context{}, err
	}
	in.Welcome = true
	in.Health = n.healthNotice(ctx, rep)
	res := apitype.Context{Text: inject.Render(in, lim), Health: in.Health}
	if !n.settings().ContextSystemMessageOff {
		sessions, err := rep.ProjectSessions(ctx, project)
		if err != nil {
			return apitype.Context{}, n.checkCorrupt(err)
		}
		res.UserMessage = inject.UserMessage(in.TotalObservations, sessions, in.Health)
	}
	return res, nil
}

// contextFile renders a project's context for its rules/context file: the memory only (no
// welcome, no health notice, which would go stale in a file).
func (n *Node) contextFile(ctx context.Context, project string) (string, error) {
	rep := n.rep.Load()
	if rep == nil {
		return "", errNotReady
	}
	in, lim, err := n.contextInput(ctx, rep, project)
	if err != nil {
		return "", err
	}
	return inject.Render(in, lim), nil
}

// contextInput reads what a project's context is rendered from.
func (n *Node) contextInput(ctx context.Context, rep *replica.Replica, project string) (inject.Input, inject.Limits, error) {
	s := n.settings()
	lim := inject.Limits{Observations: s.ContextObservations, Full: s.ContextFullCount, Sessions: s.ContextSessions, PinnedTokens: s.ContextPinnedTokens,
		Narrative: s.ContextExpand == configs.ExpandNarrative, NoEconomics: s.ContextEconomicsOff, LastSummaryFull: s.ContextLastSummaryFull}
	filtered := len(s.ContextTypes)+len(s.ContextExcludeTypes)+len(s.ContextConcepts)+len(s.ContextExcludeConcepts) > 0
	read := lim
	if filtered {
		read.Observations = min(lim.Observations*4, 2000) // room for what the filters leave out
	}
	in, err := inject.Read(ctx, rep, project, read)
	if err != nil {
		return in, lim, n.checkCorrupt(err)
	}
	if filtered {
		in.Observations = inject.Filter(in.Observations, s.ContextTypes, s.ContextExcludeTypes, s.ContextConcepts, s.ContextExcludeConcepts)
		in.Observations = in.Observations[:min(len(in.Observations), lim.Observations)]
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
		return in, lim, n.checkCorrupt(err)
	}
	return in, lim, nil
}

// healthNotice gathers what keeps memory from working fully (inject.Health words it), ""
// when all is well.
func (n *Node) healthNotice(ctx context.Context, rep *replica.Replica) string {
	h := inject.Health{Corrupt: n.corruption() != nil, Location: n.location()}
	if p := n.pipe.Load(); p != nil && p.Stats().StorageFull {
		h.FullDisk = n.cfg.DataDir
	}
	if r, ok := n.cfg.Compressor.(aiReporter); ok {
		now := n.cfg.Now()
		for _, p := range r.Stats() {
			if p.DisabledUntil.After(now) {
				h.Disabled = append(h.Disabled, inject.DisabledProvider{Name: p.Name, Until: p.DisabledUntil, LastError: p.LastError, AgentCLI: p.CLI != ""})
			}
		}
	}
	if dead, err := rep.DeadLetters(ctx); err == nil {
		h.DeadLetters = dead
	}
	if s := n.syncSummary(ctx); strings.HasPrefix(s, "error") || strings.HasPrefix(s, "removed") || strings.Contains(s, "; error with ") {
		h.Sync = s
	}
	return h.Notice()
}

func (n *Node) location() *time.Location {
	if n.cfg.Location != nil {
		return n.cfg.Location
	}
	return time.Local
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
	BudgetUsed() int64
	BudgetLimit() int64
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
		Agents:     n.seen.list(),
	}
	if cs, err := capture.Load(datadir.Dir(n.cfg.DataDir).Capture()); err != nil {
		st.Capture = []string{err.Error() + " (hooks record nothing until 'memnode resume' rewrites it)"}
	} else {
		st.Capture = cs.Describe(n.settings().OptIn(), n.cfg.Now())
	}
	if err := n.corruption(); err != nil {
		st.Storage = corruptStatus(err)
	}
	if err := n.api.Load().TCPError(); err != nil {
		st.TCPError = err.Error()
	}
	if r, ok := n.cfg.Compressor.(aiReporter); ok {
		st.Compressor.AI = &apitype.AIStatus{BudgetLeft: r.BudgetLeft(), BudgetUsed: r.BudgetUsed(), BudgetLimit: r.BudgetLimit(), Providers: []apitype.ProviderStatus{}}
		for _, p := range r.Stats() {
			ps := apitype.ProviderStatus{Name: p.Name, Model: p.Model, Calls: p.Calls, InputTokens: p.InputTokens,
				OutputTokens: p.OutputTokens, DisabledUntil: p.DisabledUntil, LastError: p.LastError, CLI: p.CLI}
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

package node

import (
	"context"
	"fmt"
	"os"

	"github.com/memnode/memnode/ai/llm"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/inject"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/replica"
)

var _ inject.Reader = (*replica.Replica)(nil)

// Context renders the memory a new session of project starts with.
func (n *Node) Context(ctx context.Context, project, sessionID string) (string, error) {
	rep := n.rep.Load()
	if rep == nil {
		return "", errNotReady
	}
	s := n.cfg.Settings
	lim := inject.Limits{Observations: s.ContextObservations, Full: s.ContextFullCount, Sessions: s.ContextSessions}
	in, err := inject.Read(ctx, rep, project, lim)
	if err != nil {
		return "", err
	}
	in.Now, in.Location = n.cfg.Now(), n.cfg.Location
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
		return nil, err
	}
	out := make([]apitype.FileObservation, 0, len(obs))
	for _, o := range obs {
		out = append(out, apitype.FileObservation{ID: o.ID, SessionID: o.SessionID, Type: o.Type, Title: o.Title,
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

// Status is the body of GET /api/status.
type Status struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
	DataDir string `json:"data_dir"`
	Addr    string `json:"addr"`
	// Socket is the Unix socket hooks, CLI and MCP use; TCPError says why the TCP port is
	// not served (taken by another program), empty when it is.
	Socket     string `json:"socket"`
	TCPError   string `json:"tcp_error,omitempty"`
	Origin     string `json:"origin"`
	Ready      bool   `json:"ready"`
	Compressor string `json:"compressor"`
	Counts     any    `json:"counts"`
	Queue      int    `json:"queue"`
	Ingested   int64  `json:"ingested"`
	Processed  int64  `json:"processed"`
	Failures   int64  `json:"failures"`
	Embeddings string `json:"embeddings"`
	Sync       string `json:"sync"`
	// Storage is "ok", or says that the disk is full and new events are refused.
	Storage string `json:"storage"`
	// AI holds per-provider calls, tokens, errors and the budget left when a provider chain
	// is configured.
	AI *AIStatus `json:"ai,omitempty"`
}

// AIStatus reports the provider chain.
type AIStatus struct {
	Providers  any   `json:"providers"`
	BudgetLeft int64 `json:"budget_left"` // -1: unlimited
}

// aiReporter is implemented by compressors that track provider usage (llm.Chain).
type aiReporter interface {
	Stats() []llm.ProviderStats
	BudgetLeft() int64
}

// Status reports the node's state.
func (n *Node) Status(ctx context.Context) (any, error) {
	rep := n.rep.Load()
	if rep == nil {
		return nil, errNotReady
	}
	c, err := rep.Counts(ctx)
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	var ais *AIStatus
	if r, ok := n.cfg.Compressor.(aiReporter); ok {
		ais = &AIStatus{Providers: r.Stats(), BudgetLeft: r.BudgetLeft()}
	}
	tcpErr := ""
	if err := n.api.Load().TCPError(); err != nil {
		tcpErr = err.Error()
	}
	return Status{
		AI: ais, Socket: localnet.SocketPath(n.cfg.DataDir), TCPError: tcpErr,
		PID: os.Getpid(), Version: n.cfg.Version, DataDir: n.cfg.DataDir, Addr: n.Addr(), Origin: rep.Origin(),
		Ready: n.Ready(), Compressor: n.cfg.Compressor.Name(), Counts: c, Queue: c.Pending,
		Ingested: n.stats.ingested.Load(), Processed: n.stats.processed.Load(), Failures: n.stats.failures.Load(),
		Embeddings: n.embedStatus(), Sync: n.syncSummary(ctx), Storage: n.storageStatus(),
	}, nil
}

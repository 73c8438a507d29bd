package node

import (
	"context"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/embed/worker"
	"github.com/memnode/memnode/inject"
	"github.com/memnode/memnode/internal/prio"
	"github.com/memnode/memnode/privacy"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
)

// Semantic inject bounds.
const (
	semanticMinPromptRunes = 20
	semanticTokenBudget    = 600
	// semanticMinScore is the cosine below which a neighbour is not worth injecting.
	semanticMinScore = 0.35
)

// startEmbed starts the embedding worker (embed/worker) when an embedder is configured.
func (n *Node) startEmbed(rep *replica.Replica, svc *search.Service) {
	if n.cfg.Embedder == nil {
		return
	}
	w := worker.New(worker.Config{Open: n.cfg.Embedder, Store: rep, Feed: n.feed, Search: svc, Logger: n.log, Background: prio.Lower})
	n.embedW.Store(w)
	w.Start()
}

// embedStatus is Status.Embed.
func (n *Node) embedStatus() apitype.EmbedStatus {
	if w := n.embedW.Load(); w != nil {
		p := w.Progress()
		return apitype.EmbedStatus{State: w.Status(), Model: p.Model, Embedded: p.Embedded, Total: p.Total, Failed: p.Failed}
	}
	return apitype.EmbedStatus{State: worker.StatusNoModel}
}

// SemanticContext serves POST /api/context/semantic: the past observations of project
// most related to a user's prompt, as a context block of at most ~600 tokens. It is
// empty when the semantic_inject setting is off, the prompt is short, no model is up,
// or nothing is similar enough.
func (n *Node) SemanticContext(ctx context.Context, project, prompt string) (string, error) {
	if !n.settings().SemanticInject || len([]rune(strings.TrimSpace(prompt))) < semanticMinPromptRunes {
		return "", nil
	}
	rep, svc := n.rep.Load(), n.searchSvc.Load()
	if rep == nil || svc == nil {
		return "", errNotReady
	}
	if n.embedW.Load() == nil {
		return "", nil
	}
	limit := n.settings().SemanticInjectLimit
	if limit <= 0 {
		limit = configs.DefaultSemanticInjectLimit
	}
	hits, err := svc.Related(ctx, privacy.Clean(prompt), project, limit, semanticMinScore)
	if err != nil || len(hits) == 0 {
		return "", err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	obs, err := rep.GetObservations(ctx, ids)
	if err != nil || len(obs) == 0 {
		return "", err
	}
	names, err := rep.DeviceNames(ctx)
	if err != nil {
		return "", err
	}
	who := inject.Input{LocalOrigin: rep.Origin(), DeviceName: func(origin string) string { return names[origin] }}
	return who.Semantic(obs, semanticTokenBudget), nil
}

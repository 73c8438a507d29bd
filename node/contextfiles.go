package node

import (
	"context"
	"os"

	"github.com/memnode/memnode/contextfile/writer"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/replica"
)

// startContextFiles starts the context-file writer when some platform has a context file:
// it subscribes to the feed before the workers commit anything.
func (n *Node) startContextFiles(rep *replica.Replica) {
	if len(n.cfg.ContextFiles) == 0 {
		return
	}
	home, _ := os.UserHomeDir()
	w := writer.New(writer.Config{
		Targets: datadir.Dir(n.cfg.DataDir).ContextFiles(),
		Specs:   n.cfg.ContextFiles,
		Feed:    n.feed,
		ProjectOf: func(ctx context.Context, id string) (string, bool, error) {
			rec, ok, err := rep.Lookup(ctx, id)
			if err != nil || !ok || rec.Summary == nil {
				return "", false, err
			}
			return rec.Summary.Project, true, nil
		},
		Render: n.contextFile,
		RootOf: func(cwd string) string { return hooks.ProjectRoot(cwd, home) },
		Logger: n.log,
	})
	n.ctxFiles.Store(w)
	w.Start()
}

// noteContextFile tells the context-file writer where an event's agent works.
func (n *Node) noteContextFile(platform, project, cwd string) {
	if w := n.ctxFiles.Load(); w != nil {
		w.Note(platform, project, cwd)
	}
}

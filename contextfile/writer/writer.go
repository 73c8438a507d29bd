// Package writer is the node's context-file writer: it learns from hook events which project
// directories an agent without an injection API works in (contextfile.Target, persisted in
// the data dir), and after every commit that brings a session summary for such a project
// (or forgets anything) it rewrites that agent's context file there with the context a new
// session would get.
package writer

import (
	"context"
	"log/slog"
	"os"
	"sync"

	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/feed"
)

// Config configures a Writer. Every field but Logger is required.
type Config struct {
	// Targets is the targets file (datadir.Dir.ContextFiles()).
	Targets string
	// Specs maps a platform name to its context file; platforms not in it are ignored.
	Specs map[string]contextfile.Spec
	Feed  *feed.Bus
	// ProjectOf returns the project of a committed summary.
	ProjectOf func(ctx context.Context, summaryID string) (string, bool, error)
	// Render is the context a new session of project gets ("" when it has no memory yet).
	Render func(ctx context.Context, project string) (string, error)
	// RootOf is a working directory's project root (the git root above it).
	RootOf func(cwd string) string
	Logger *slog.Logger
}

// noteBuffer is how many sightings may wait; more are dropped (the next event brings
// the same project again).
const noteBuffer = 256

// maxSeen bounds the memory of sightings already recorded.
const maxSeen = 4096

// Writer keeps context files in step with memory. New → Start → Close.
type Writer struct {
	cfg   Config
	log   *slog.Logger
	notes chan contextfile.Target // Root holds the cwd until the loop resolves it

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	done    chan struct{}
}

// New returns a stopped writer.
func New(cfg Config) *Writer {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Writer{cfg: cfg, log: log, notes: make(chan contextfile.Target, noteBuffer), done: make(chan struct{})}
}

// Note tells the writer that an event of platform came from cwd in project. It never
// blocks and does no I/O: ingest calls it for every event.
func (w *Writer) Note(platform, project, cwd string) {
	if cwd == "" || project == "" {
		return
	}
	if _, ok := w.cfg.Specs[platform]; !ok {
		return
	}
	select {
	case w.notes <- contextfile.Target{Platform: platform, Project: project, Root: cwd}:
	default:
	}
}

// Start subscribes to the feed (before it returns: no later commit is missed) and runs the
// loop.
func (w *Writer) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started {
		return
	}
	w.started = true
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	sub := w.cfg.Feed.Subscribe(0)
	go func() {
		defer close(w.done)
		defer sub.Close()
		w.run(ctx, sub)
	}()
}

// Close stops the loop and waits for it; it is idempotent. A file write in progress
// finishes (it is atomic either way).
func (w *Writer) Close() error {
	w.mu.Lock()
	if !w.started {
		w.started = true
		close(w.done)
	} else if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
	<-w.done
	return nil
}

func (w *Writer) run(ctx context.Context, sub *feed.Subscription) {
	seen := map[contextfile.Target]bool{} // sightings already resolved, by cwd
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-w.notes:
			w.note(n, seen)
		case _, ok := <-sub.Ready():
			if !ok {
				return
			}
			// The events of a summary's session were noted before it was committed.
			for drained := false; !drained; {
				select {
				case n := <-w.notes:
					w.note(n, seen)
				default:
					drained = true
				}
			}
			changes, overflowed := sub.Take()
			all := overflowed
			projects := map[string]bool{}
			for _, c := range changes {
				if len(c.Forgotten) > 0 {
					all = true // forgotten text must leave the files too
				}
				for _, id := range c.Summaries {
					p, ok, err := w.cfg.ProjectOf(ctx, id)
					if err != nil {
						w.log.Warn("context file: look up summary", "err", err)
						continue
					}
					if ok {
						projects[p] = true
					}
				}
			}
			if all || len(projects) > 0 {
				w.refresh(ctx, func(t contextfile.Target) bool { return all || projects[t.Project] })
				// An uninstall may have dropped targets meanwhile: the next sighting of each
				// looks at the file again (once per summary, not per event).
				clear(seen)
			}
		}
	}
}

// note records a sighting's target (its cwd resolved to the project root) once.
func (w *Writer) note(n contextfile.Target, seen map[contextfile.Target]bool) {
	if seen[n] {
		return
	}
	if len(seen) >= maxSeen {
		clear(seen)
	}
	seen[n] = true
	t := n
	t.Root = w.cfg.RootOf(n.Root)
	if _, err := contextfile.AddTarget(w.cfg.Targets, t); err != nil {
		w.log.Warn("record context file target", "err", err)
	}
}

// refresh rewrites the context file of every target which selects. A target whose
// directory is gone is dropped.
func (w *Writer) refresh(ctx context.Context, which func(contextfile.Target) bool) {
	ts, err := contextfile.LoadTargets(w.cfg.Targets)
	if err != nil {
		w.log.Warn("context files", "err", err)
		return
	}
	texts := map[string]string{}
	for _, t := range ts {
		spec, ok := w.cfg.Specs[t.Platform]
		if !ok || !which(t) {
			continue
		}
		if fi, err := os.Stat(t.Root); err != nil || !fi.IsDir() {
			_, _ = contextfile.DropTargets(w.cfg.Targets, func(x contextfile.Target) bool { return x == t })
			continue
		}
		text, ok := texts[t.Project]
		if !ok {
			if text, err = w.cfg.Render(ctx, t.Project); err != nil {
				w.log.Warn("context file: render", "project", t.Project, "err", err)
				continue
			}
			texts[t.Project] = text
		}
		if _, err := contextfile.Write(spec.File(t.Root), spec, text); err != nil {
			w.log.Warn("context file: write", "platform", t.Platform, "err", err)
		}
	}
}

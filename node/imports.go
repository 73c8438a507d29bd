package node

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
)

// historyImports runs the viewer's imports of an agent's past sessions, one at a time, on
// a goroutine of its own that stop cancels and waits for. The zero value is ready.
type historyImports struct {
	mu     sync.Mutex
	st     apitype.ViewerImport
	cancel context.CancelFunc
	closed bool
	wg     sync.WaitGroup
}

// errImportRunning means an import was asked while one runs.
var errImportRunning = fmt.Errorf("%w: an import is running already", memory.ErrInvalid)

// start begins importing platform's history with run, unless one runs (the current state
// and errImportRunning) or the node is stopping.
func (h *historyImports) start(platform string, run func(ctx context.Context, platform string, progress func(done, total int)) ([]string, error)) (apitype.ViewerImport, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return h.st, errNotReady
	case h.st.Running:
		return h.st, fmt.Errorf("%w (%s): wait for it", errImportRunning, h.st.Platform)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.st = apitype.ViewerImport{Platform: platform, Running: true}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		defer cancel()
		summary, err := run(ctx, platform, func(done, total int) {
			h.mu.Lock()
			h.st.Done, h.st.Total = done, total
			h.mu.Unlock()
		})
		h.mu.Lock()
		defer h.mu.Unlock()
		h.st.Running, h.st.Summary = false, slices.Clone(summary)
		if err != nil {
			h.st.Error = err.Error()
		}
	}()
	return h.st, nil
}

// state is the current (or last) import.
func (h *historyImports) state() apitype.ViewerImport {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.st
	st.Summary = slices.Clone(st.Summary)
	return st
}

// stop cancels a running import and waits for it; no import starts after.
func (h *historyImports) stop() {
	h.mu.Lock()
	h.closed = true
	if h.cancel != nil {
		h.cancel()
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// StartImport starts importing an agent's past sessions (the viewer's first-run offer).
func (v viewerBackend) StartImport(ctx context.Context, platform string) (apitype.ViewerImport, error) {
	if v.n.cfg.ImportHistory == nil {
		return apitype.ViewerImport{}, fmt.Errorf("%w: this node cannot import past sessions (use memnode import --from-%s)", memory.ErrInvalid, platform)
	}
	return v.n.imports.start(platform, v.n.cfg.ImportHistory)
}

// Import is the state of the viewer's current (or last) import.
func (v viewerBackend) Import(ctx context.Context) (apitype.ViewerImport, error) {
	return v.n.imports.state(), nil
}

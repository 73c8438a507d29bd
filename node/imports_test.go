package node

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
)

// TestHistoryImportsOneAtATime: the viewer's import runs on its own goroutine, reports
// progress, refuses a second while it runs (memory.ErrInvalid: a 400), keeps its summary
// when done, and stop cancels a running one and waits for it.
func TestHistoryImportsOneAtATime(t *testing.T) {
	var h historyImports
	release := make(chan struct{})
	run := func(ctx context.Context, platform string, progress func(done, total int)) ([]string, error) {
		progress(1, 3)
		select {
		case <-release:
			return []string{"imported 3 " + platform + " sessions"}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	st, err := h.start("codex", run)
	if err != nil || !st.Running || st.Platform != "codex" {
		t.Fatalf("start: %+v, %v", st, err)
	}
	testkit.WaitFor(t, "progress", 10*time.Second, func() bool { return h.state().Done == 1 && h.state().Total == 3 })
	if _, err := h.start("gemini-cli", run); !errors.Is(err, memory.ErrInvalid) {
		t.Errorf("a second import while one runs: %v", err)
	}
	close(release)
	testkit.WaitFor(t, "the import to end", 10*time.Second, func() bool { return !h.state().Running })
	if st := h.state(); len(st.Summary) != 1 || st.Summary[0] != "imported 3 codex sessions" || st.Error != "" {
		t.Errorf("done: %+v", st)
	}

	// A running import is cancelled by stop, which waits for it; none starts after.
	release = make(chan struct{}) // never closed: only stop ends this one
	if _, err := h.start("qwen-code", run); err != nil {
		t.Fatal(err)
	}
	h.stop()
	if st := h.state(); st.Running || st.Error != context.Canceled.Error() {
		t.Errorf("after stop: %+v", st)
	}
	if _, err := h.start("codex", run); err == nil {
		t.Error("an import started after stop")
	}
}

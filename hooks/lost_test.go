package hooks

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/datadir"
)

// TestEventNeitherDeliveredNorSpooledFailsLoudAtOnce: the node is down and the spool cannot
// be written (here its directory is a file; on a full disk, ENOSPC): the very first hook
// exits 2 with one stderr line, and no state file is needed for it.
func TestEventNeitherDeliveredNorSpooledFailsLoudAtOnce(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	cfg.BaseURL = deadURL(t)
	if err := os.WriteFile(datadir.Dir(cfg.DataDir).Spool(), []byte("not a dir"), 0o600); err != nil {
		t.Fatal(err)
	}
	payload := map[string]any{"session_id": sid, "cwd": newProject(t), "tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}}
	r := runHook(t, cfg, "observation", payload)
	if r.code != 2 {
		t.Fatalf("code %d, want 2 at the first lost event (stderr %q)", r.code, r.stderr)
	}
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "memnode: event not kept") ||
		!strings.Contains(r.stderr, cfg.DataDir) || strings.Contains(r.stderr, n.token) {
		t.Fatalf("stderr %q: want one line naming the data dir, no token", r.stderr)
	}
	if !reflect.DeepEqual(r.out, map[string]any{"continue": true, "suppressOutput": true}) {
		t.Fatalf("output %v: the agent still gets its neutral answer", r.out)
	}
}

package hooks

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/capture"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/claudecode"
	"github.com/memnode/memnode/platform/registry"
)

// sentFor runs every event of a session in cwd and reports whether the node saw anything.
func sentFor(t *testing.T, n *fakeNode, cfg Config, cwd string) bool {
	t.Helper()
	before := n.Seen()
	for _, ev := range []string{"context", "session-init", "observation", "summarize", "session-end"} {
		runHook(t, cfg, ev, map[string]any{"session_id": sid, "cwd": cwd, "prompt": "x", "tool_name": "Bash",
			"tool_input": map[string]any{"command": "make"}, "last_assistant_message": "done"})
	}
	return n.Seen() != before
}

// TestCaptureSwitches: a paused project (or all projects paused) sends nothing, a pause
// for a while ends by itself, and under opt-in only a tracked project (by name or by the
// marker file in its root) is sent.
func TestCaptureSwitches(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	now := cfg.Now()
	cwd := newProject(t) // project demo-app
	path := datadir.Dir(cfg.DataDir).Capture()
	save := func(s capture.State) {
		t.Helper()
		if err := capture.Save(path, s); err != nil {
			t.Fatal(err)
		}
	}
	if !sentFor(t, n, cfg, cwd) {
		t.Fatal("nothing sent without any switch")
	}

	var st capture.State
	st.Pause("demo-app", now, 0)
	save(st)
	if sentFor(t, n, cfg, cwd) {
		t.Errorf("a paused project was sent: %s", n.Seen())
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if !sentFor(t, n, cfg, other) {
		t.Errorf("pausing demo-app paused another project")
	}

	st = capture.State{}
	st.Pause(capture.AllProjects, now.Add(-time.Hour), 30*time.Minute) // ended 30 min ago
	save(st)
	if !sentFor(t, n, cfg, cwd) {
		t.Errorf("a pause that ended still holds")
	}
	st.Pause(capture.AllProjects, now, 2*time.Hour)
	save(st)
	if sentFor(t, n, cfg, other) {
		t.Errorf("all projects paused, still sent")
	}

	save(capture.State{})
	cfg.OptIn = true
	if sentFor(t, n, cfg, cwd) {
		t.Errorf("opt-in: an untracked project was sent")
	}
	if err := os.WriteFile(filepath.Join(cwd, capture.MarkerFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !sentFor(t, n, cfg, filepath.Join(cwd)) {
		t.Errorf("opt-in: the marker file did not track the project")
	}
	if !sentFor(t, n, cfg, mkdir(t, filepath.Join(cwd, "src", "pkg"))) {
		t.Errorf("opt-in: the marker file in the root did not cover a subdirectory")
	}
	save(capture.State{Tracked: []string{"other"}})
	if !sentFor(t, n, cfg, other) {
		t.Errorf("opt-in: a project tracked by name was not sent")
	}

	// A switch file that cannot be read records nothing (it may hold a pause).
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg.OptIn = false
	if sentFor(t, n, cfg, other) {
		t.Errorf("a broken switch file let the events through")
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDisabledSendsNothing: with MEMNODE_DISABLED=1, Main answers every event neutrally,
// reads its stdin to the end and creates nothing in the data dir (no node contact: the port
// is a dead one, so a send would spool).
func TestDisabledSendsNothing(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{DisabledEnv: "1"}
	getenv := func(k string) string { return env[k] }
	started := false
	start := func(context.Context) error { started = true; return nil }
	payload := `{"session_id":"s","cwd":"/tmp","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make"},"tool_response":{"stdout":"ok"}}`
	for _, ev := range []string{"context", "session-init", "observation", "summarize", "session-end"} {
		var stdout, stderr bytes.Buffer
		in := strings.NewReader(payload)
		code := Main(context.Background(), registry.Builtin(), getenv, dataDir, configs.Settings{Port: 1}, start, "test",
			[]string{"claude-code", ev}, in, &stdout, &stderr)
		if code != 0 || stderr.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q", ev, code, stderr.String())
		}
		neutral, _ := claudecode.Platform().Adapter.Format(ev, platform.Result{})
		if got := strings.TrimSpace(stdout.String()); got != string(neutral) {
			t.Errorf("%s: answered %s, want the neutral answer", ev, got)
		}
		if in.Len() != 0 {
			t.Errorf("%s: %d bytes of stdin left unread", ev, in.Len())
		}
	}
	if started {
		t.Errorf("a disabled hook started the node")
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("a disabled hook touched the data dir: %v", err)
	}
	for v, want := range map[string]bool{"1": true, "true": true, "YES": true, "on": true, "0": false, "": false, "false": false} {
		env[DisabledEnv] = v
		if Disabled(getenv) != want {
			t.Errorf("Disabled with %s=%q = %v", DisabledEnv, v, !want)
		}
	}
}

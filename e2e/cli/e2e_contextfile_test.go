package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/platform/cursor"
)

// replayCursor runs the Cursor fixture session through the lean hook binary, in proj, each
// payload through the memnode hook its Cursor event is installed for; it returns the
// sessionStart answer.
func replayCursor(t *testing.T, in *e2ekit.Instance, proj string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", cursor.Platform().Fixtures, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var start string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(sc.Text(), "/home/dev/demo-app", proj)), &rec); err != nil {
			t.Fatal(err)
		}
		for _, spec := range cursor.HookSpecs() {
			if spec.Event != rec.Event {
				continue
			}
			r := in.RunLean(rec.Payload, "hook", "cursor", spec.Sub)
			if r.Code != 0 || !json.Valid([]byte(r.Stdout)) {
				t.Fatalf("hook cursor %s (%s): exit %d, stdout %q, stderr %s", spec.Sub, rec.Event, r.Code, r.Stdout, r.Stderr)
			}
			if rec.Event == "sessionStart" {
				start = r.Stdout
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return start
}

// TestCursorContextFileFollowsMemory: a real node keeps Cursor's rules file in the project a
// Cursor session worked in — written after the session's summary, with the next session's
// context (and sessionStart injects the same), never the session's private text — and
// `memnode uninstall cursor` removes the hooks, the MCP entry and the file memnode created.
func TestCursorContextFileFollowsMemory(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	proj := filepath.Join(t.TempDir(), "demo-app")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := in.MustRun(nil, "install", "cursor")
	hooksJSON := filepath.Join(in.DataDir, ".cursor", "hooks.json")
	if !strings.Contains(out, hooksJSON) {
		t.Fatalf("install output does not name %s:\n%s", hooksJSON, out)
	}

	replayCursor(t, in, proj)
	rules := filepath.Join(proj, ".cursor", "rules", "memnode-context.mdc")
	read := func() string { b, _ := os.ReadFile(rules); return string(b) }
	testkit.WaitFor(t, "Cursor rules file with the session's memory", 20*time.Second, func() bool {
		return strings.Contains(read(), "Hello, world") || strings.Contains(read(), "typo")
	})
	got := read()
	if !strings.HasPrefix(got, "---\n") || !strings.Contains(got, "alwaysApply: true") || !strings.Contains(got, "<memnode-context>") {
		t.Fatalf("rules file lacks front matter or the context block:\n%s", got)
	}
	if strings.Contains(got, "SECRET-tok-42") {
		t.Fatalf("the session's private text reached the rules file:\n%s", got)
	}
	e2ekit.GrepDataDir(t, in.DataDir, "SECRET-tok-42")

	// The next session gets the same memory through sessionStart.
	next := `{"hook_event_name":"sessionStart","conversation_id":"next","session_id":"next","workspace_roots":[` + e2ekit.JsonString(proj) + `]}`
	r := in.RunLean([]byte(next), "hook", "cursor", "context")
	var answer struct {
		AdditionalContext string `json:"additional_context"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &answer); err != nil || !strings.Contains(answer.AdditionalContext, "<memnode-context>") {
		t.Fatalf("sessionStart answer %q: %v", r.Stdout, err)
	}

	out = in.MustRun(nil, "uninstall", "cursor")
	if !strings.Contains(out, "removed "+rules) {
		t.Errorf("uninstall output does not report the rules file removed:\n%s", out)
	}
	for _, p := range []string{rules, hooksJSON, filepath.Join(in.DataDir, ".cursor", "mcp.json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind after uninstall: %v", p, err)
		}
	}
	ts, err := contextfile.LoadTargets(filepath.Join(in.DataDir, "state", "context-files.json"))
	if err != nil || len(ts) != 0 {
		t.Errorf("targets after uninstall = %v, %v; want none", ts, err)
	}
}

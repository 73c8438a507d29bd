package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/internal/testkit"
)

// TestFileContextOncePerSessionNeverForSubagents: real hook processes (`memnode hook` and
// the lean `memnode-hook`) against a real node. A file's history is injected before a Read
// once per session, with short IDs; not again in the same session (also not through the
// other binary), again in a new session; never in a subagent's call (agent_id, or a
// transcript under subagents/), which does not use up the session's one time either; a
// file changed since its observations says so on their lines.
func TestFileContextOncePerSessionNeverForSubagents(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	proj := filepath.Join(t.TempDir(), "ledgerproj")
	file := filepath.Join(proj, "internal", "auth", "middleware.go")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("package auth\n\n// "+strings.Repeat("token check ", 200)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(file, long, long); err != nil {
		t.Fatal(err)
	}
	edit := map[string]any{"session_id": "ledger-s0", "transcript_path": "", "cwd": proj, "hook_event_name": "PostToolUse",
		"tool_name": "Edit", "tool_use_id": "toolu_e1",
		"tool_input":    map[string]any{"file_path": file, "old_string": "token check", "new_string": "bearer check", "replace_all": false},
		"tool_response": map[string]any{"filePath": file, "oldString": "token check", "newString": "bearer check"}}
	if r := in.Run(mustJSON(t, edit), "hook", "claude-code", "observation"); r.Code != 0 {
		t.Fatalf("observation hook: exit %d %s", r.Code, r.Stderr)
	}
	db := in.Db()
	testkit.WaitFor(t, "the edit's observation", 30*time.Second, func() bool {
		return in.Queued() == 0 && in.Count(db, "SELECT COUNT(*) FROM observations WHERE session_id = 'ledger-s0'") == 1
	})
	var id string
	if err := db.QueryRow("SELECT id FROM observations WHERE session_id = 'ledger-s0'").Scan(&id); err != nil {
		t.Fatal(err)
	}
	db.Close()
	c, err := client.FromDataDir(in.DataDir, in.Port)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := c.Timeline(context.Background(), apitype.TimelineQuery{Anchor: id})
	if err != nil || len(tl.Items) == 0 || tl.Items[0].Short == "" {
		t.Fatalf("short ID of %s: %+v %v", id, tl, err)
	}
	short := tl.Items[0].Short

	read := func(lean bool, session string, extra map[string]any) string {
		t.Helper()
		p := map[string]any{"session_id": session, "transcript_path": "", "cwd": proj, "hook_event_name": "PreToolUse",
			"tool_name": "Read", "tool_use_id": "toolu_r", "tool_input": map[string]any{"file_path": file}}
		for k, v := range extra {
			p[k] = v
		}
		var r e2ekit.Result
		if lean {
			r = in.RunLean(mustJSON(t, p), "hook", "claude-code", "file-context")
		} else {
			r = in.Run(mustJSON(t, p), "hook", "claude-code", "file-context")
		}
		if r.Code != 0 {
			t.Fatalf("file-context hook: exit %d %s", r.Code, r.Stderr)
		}
		var out struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
			t.Fatalf("file-context stdout %q: %v", r.Stdout, err)
		}
		return out.HookSpecificOutput.AdditionalContext
	}
	history := func(ctx string) bool { return strings.Contains(ctx, "middleware.go has 1 prior observation") }

	// A subagent's reads come first: they get nothing and leave the session's one time.
	if got := read(false, "ledger-s1", map[string]any{"agent_id": "agent-7", "agent_type": "general-purpose"}); got != "" {
		t.Errorf("subagent (agent_id) got file context:\n%s", got)
	}
	if got := read(true, "ledger-s1", map[string]any{"transcript_path": filepath.Join(t.TempDir(), "ledger-s1", "subagents", "agent-9.jsonl")}); got != "" {
		t.Errorf("subagent (transcript under subagents/) got file context:\n%s", got)
	}
	first := read(false, "ledger-s1", nil)
	if !history(first) {
		t.Fatalf("first read in the session: no history:\n%s", first)
	}
	if !strings.Contains(first, "\n"+short+" ") || strings.Contains(first, id) {
		t.Errorf("file context does not use the short ID %s (full %s):\n%s", short, id, first)
	}
	if strings.Contains(first, "file changed since") {
		t.Errorf("unchanged file marked as changed:\n%s", first)
	}
	for _, lean := range []bool{false, true} {
		if got := read(lean, "ledger-s1", nil); got != "" {
			t.Errorf("second read in the same session (lean %v) injected the history again:\n%s", lean, got)
		}
	}
	if !history(read(true, "ledger-s2", nil)) {
		t.Errorf("a new session (lean hook) did not get the history")
	}

	// The file changes after the observation: its line says so.
	now := time.Now().Add(time.Minute)
	if err := os.Chtimes(file, now, now); err != nil {
		t.Fatal(err)
	}
	if got := read(false, "ledger-s3", nil); !strings.Contains(got, " (file changed since)") || !strings.Contains(got, short) {
		t.Errorf("a changed file's history does not say so:\n%s", got)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

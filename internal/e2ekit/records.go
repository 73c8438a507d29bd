package e2ekit

import (
	"encoding/json"
	"testing"

	"github.com/memnode/memnode/internal/testkit"
)

// GrepDataDir fails if any file under dir contains needle.
func GrepDataDir(t *testing.T, dir, needle string) {
	t.Helper()
	for _, f := range testkit.FilesContaining(t, dir, needle) {
		t.Errorf("%s contains %q", f, needle)
	}
}

func ContextFor(t *testing.T, in *Instance, proj string) string {
	t.Helper()
	payload := `{"session_id":"next-session","transcript_path":"","cwd":` + JsonString(proj) + `,"hook_event_name":"SessionStart","source":"startup"}`
	r := in.Run([]byte(payload), "hook", "claude-code", "context")
	if r.Code != 0 {
		t.Fatalf("context hook: exit %d: %s", r.Code, r.Stderr)
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("context hook stdout %q: %v", r.Stdout, err)
	}
	if out.HookSpecificOutput.HookEventName != "SessionStart" {
		t.Fatalf("hookEventName = %q", out.HookSpecificOutput.HookEventName)
	}
	return out.HookSpecificOutput.AdditionalContext
}

func JsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

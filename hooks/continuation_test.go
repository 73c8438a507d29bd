package hooks

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform/qwencode"
)

// TestPromptContinuationIsNotRecorded: Qwen Code fires UserPromptSubmit before every model
// request of a turn, with an empty prompt after the first; only the first is a prompt.
func TestPromptContinuationIsNotRecorded(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	cwd := newProject(t)
	run := func(payload string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), cfg, qwencode.Platform(), "session-init", strings.NewReader(payload), &stdout, &stderr); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		return strings.TrimSpace(stdout.String())
	}
	run(`{"session_id":"s","cwd":"` + cwd + `","hook_event_name":"UserPromptSubmit","prompt":"fix the login bug","submitted_prompt":"fix the login bug"}`)
	for range 3 {
		if out := run(`{"session_id":"s","cwd":"` + cwd + `","hook_event_name":"UserPromptSubmit","prompt":""}`); out != "{}" {
			t.Fatalf("continuation answered %s", out)
		}
	}
	evs := n.Events()
	if len(evs) != 1 || evs[0].Prompt != "fix the login bug" {
		t.Fatalf("events = %+v, want the one prompt", evs)
	}
}

package hooks

import (
	"reflect"
	"strings"
	"testing"
)

func TestSessionInitSemanticContext(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	cwd := newProject(t)
	neutral := map[string]any{"continue": true, "suppressOutput": true}
	block := "<memnode-context>\n- 01ABC bugfix: fixed login cookie expiry\n</memnode-context>"

	// Setting off on the node: it answers "", and the output stays neutral.
	long := "why does the login cookie expire so early after deploys?"
	r := runHook(t, cfg, "session-init", map[string]any{"session_id": sid, "cwd": cwd, "prompt": long})
	if r.code != 0 || !reflect.DeepEqual(r.out, neutral) {
		t.Fatalf("semantic off: code %d out %v", r.code, r.out)
	}
	if !strings.Contains(n.Seen(), "POST /api/context/semantic") {
		t.Fatal("a long prompt did not ask for semantic context")
	}

	n.mu.Lock()
	n.semantic = block + "\n"
	n.mu.Unlock()
	r = runHook(t, cfg, "session-init", map[string]any{"session_id": sid, "cwd": cwd, "prompt": long})
	want := map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": "UserPromptSubmit", "additionalContext": block}}
	if r.code != 0 || !reflect.DeepEqual(r.out, want) {
		t.Fatalf("semantic on: code %d out %v, want %v", r.code, r.out, want)
	}
	if evs := n.Events(); len(evs) != 2 || evs[1].Prompt != long {
		t.Fatalf("prompt events = %+v", evs)
	}

	// A short prompt costs no extra request.
	before := strings.Count(n.Seen(), "/api/context/semantic")
	r = runHook(t, cfg, "session-init", map[string]any{"session_id": sid, "cwd": cwd, "prompt": "run the tests"})
	if !reflect.DeepEqual(r.out, neutral) || strings.Count(n.Seen(), "/api/context/semantic") != before {
		t.Fatalf("short prompt: out %v, semantic requests %d → %d", r.out, before, strings.Count(n.Seen(), "/api/context/semantic"))
	}
	// A private prompt is never sent for lookup.
	r = runHook(t, cfg, "session-init", map[string]any{"session_id": sid, "cwd": cwd, "prompt": "<private>the staging password is hunter2hunter2</private>"})
	if !reflect.DeepEqual(r.out, neutral) || strings.Contains(n.Seen(), "hunter2") {
		t.Fatalf("private prompt: out %v; node saw it: %v", r.out, strings.Contains(n.Seen(), "hunter2"))
	}
}

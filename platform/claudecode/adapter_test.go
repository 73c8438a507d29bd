package claudecode

import (
	"encoding/json"
	"github.com/memnode/memnode/platform/platformtest"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/privacy"
)

const sid = "5f0c9a3e-1b2d-4c7e-9f10-aa11bb22cc33"

// fixtureCalls reads the recorded session: one hook call per line.
func fixtureCalls(tb testing.TB) []platformtest.Call {
	tb.Helper()
	return platformtest.Session(tb, filepath.Join("..", "..", Platform().Fixtures))
}

func TestClaudeCodeNormalize(t *testing.T) {
	calls := fixtureCalls(t)
	norm := func(i int) platform.Input {
		t.Helper()
		cleaned, err := privacy.CleanJSON(calls[i].Payload)
		if err != nil {
			t.Fatal(err)
		}
		in, err := Adapter{}.Normalize(calls[i].Event, cleaned)
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	in := norm(0)
	if in.SessionID != sid || in.Cwd != "/home/dev/demo-app" || in.HookEventName != "SessionStart" || in.Reason != "startup" || in.TranscriptPath != "transcript.jsonl" {
		t.Errorf("SessionStart: %+v", in)
	}
	if in := norm(1); in.Prompt != "The login endpoint returns 500 when the JWT has expired. Find out why and fix it. " {
		t.Errorf("prompt: %q", in.Prompt)
	}
	if in := norm(2); !reflect.DeepEqual(in.FilePaths, []string{"/home/dev/demo-app/internal/auth/middleware.go"}) || in.ToolName != "Read" || in.ToolUseID != "toolu_01Read" {
		t.Errorf("PreToolUse: %+v", in)
	}
	in = norm(4)
	var ti map[string]any
	if err := json.Unmarshal(in.ToolInput, &ti); err != nil || ti["old_string"] != "claims, _ := parse(tok)" || in.ToolName != "Edit" || len(in.ToolResponse) == 0 {
		t.Errorf("PostToolUse Edit: %+v %v", in, err)
	}
	if in.FilePaths != nil {
		t.Error("FilePaths is for file-context only")
	}
	if in := norm(9); in.AgentID != "agent-7" || in.AgentType != "general-purpose" {
		t.Errorf("subagent: %+v", in)
	}
	if in := norm(12); in.Reason != "prompt_input_exit" {
		t.Errorf("SessionEnd: %+v", in)
	}
	if in := norm(10); in.StopHookActive || in.AgentID != "agent-7" || in.LastAssistantMessage != nil {
		t.Errorf("SubagentStop: %+v", in)
	}
	stop, err := Adapter{}.Normalize("summarize", []byte(`{"stop_hook_active":true,"last_assistant_message":"hi"}`))
	if err != nil || !stop.StopHookActive || stop.LastAssistantMessage == nil || *stop.LastAssistantMessage != "hi" {
		t.Errorf("stop: %+v %v", stop, err)
	}
	if _, err := (Adapter{}).Normalize("observation", []byte(`{"tool_name": 3}`)); err == nil {
		t.Error("a wrongly typed field must be an error")
	}
	if in, _ := (Adapter{}).Normalize("observation", []byte(`{"tool_name":"X","tool_input":null}`)); in.ToolInput != nil {
		t.Errorf("null tool_input kept: %s", in.ToolInput)
	}
}

func TestClaudeCodeFormat(t *testing.T) {
	cc := Adapter{}
	cases := []struct {
		event string
		res   platform.Result
		want  string
	}{
		{"context", platform.Result{AdditionalContext: "<memnode-context>a & b</memnode-context>"}, `{"hookSpecificOutput":{"additionalContext":"<memnode-context>a & b</memnode-context>","hookEventName":"SessionStart"}}`},
		{"context", platform.Result{}, `{"hookSpecificOutput":{"additionalContext":"","hookEventName":"SessionStart"}}`},
		{"context", platform.Result{AdditionalContext: "c", SystemMessage: "memnode: 2 memories from 1 session"}, `{"hookSpecificOutput":{"additionalContext":"c","hookEventName":"SessionStart"},"systemMessage":"memnode: 2 memories from 1 session"}`},
		{"file-context", platform.Result{AdditionalContext: "x", SystemMessage: "not here"}, `{"hookSpecificOutput":{"additionalContext":"x","hookEventName":"PreToolUse"}}`},
		{"file-context", platform.Result{AdditionalContext: "x"}, `{"hookSpecificOutput":{"additionalContext":"x","hookEventName":"PreToolUse"}}`},
		{"file-context", platform.Result{}, `{"continue":true,"suppressOutput":true}`},
		{"observation", platform.Result{}, `{"continue":true,"suppressOutput":true}`},
		{"session-init", platform.Result{}, `{"continue":true,"suppressOutput":true}`},
		{"summarize", platform.Result{}, `{"continue":true,"suppressOutput":true}`},
		{"session-end", platform.Result{}, `{"continue":true,"suppressOutput":true}`},
		{"unknown", platform.Result{}, `{"continue":true,"suppressOutput":true}`},
	}
	for _, c := range cases {
		got, err := cc.Format(c.event, c.res)
		if err != nil || string(got) != c.want {
			t.Errorf("Format(%s) = %s, %v; want %s", c.event, got, err, c.want)
		}
	}
}

// TestNormalizeFailureAndBookkeeping: a PostToolUseFailure becomes a call whose response is
// the canonical failure; housekeeping tools and memnode's own MCP tools are marked.
func TestNormalizeFailureAndBookkeeping(t *testing.T) {
	in, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"session_id":"s","hook_event_name":"PostToolUseFailure",
		"tool_name":"Bash","tool_input":{"command":"go test ./..."},"error":"Exit code 1\nFAIL x","is_interrupt":true,"duration_ms":1520}`))
	if err != nil {
		t.Fatal(err)
	}
	var f platform.Failure
	if err := json.Unmarshal(in.ToolResponse, &f); err != nil || f != (platform.Failure{Error: "Exit code 1\nFAIL x", IsInterrupt: true, DurationMS: 1520}) {
		t.Fatalf("failure response %s: %+v %v", in.ToolResponse, f, err)
	}
	if in.Bookkeeping {
		t.Error("a failed Bash is not bookkeeping")
	}
	for tool, want := range map[string]bool{"ToolSearch": true, "TodoWrite": true, "BashOutput": true, "mcp__memnode__search": true,
		"Bash": false, "Read": false, "mcp__github__create_issue": false} {
		in, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"tool_name":"`+tool+`"}`))
		if err != nil || in.Bookkeeping != want {
			t.Errorf("%s: bookkeeping %v, want %v (%v)", tool, in.Bookkeeping, want, err)
		}
	}
	if got := (Adapter{}).MCPTool("search"); got != "mcp__memnode__search" {
		t.Errorf("MCPTool = %q", got)
	}
}

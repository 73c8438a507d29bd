package qwencode

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
	"github.com/memnode/memnode/privacy"
)

func fixtureDir() string { return filepath.Join("..", "..", Platform().Fixtures) }

type replayed struct {
	event string
	in    platform.Input
}

// replay runs every recorded call through the hooks memnode installs for its event, cleaned
// first as the hook does.
func replay(t *testing.T) []replayed {
	t.Helper()
	var out []replayed
	for _, c := range platformtest.Session(t, fixtureDir()) {
		for _, spec := range HookSpecs() {
			if spec.Event != c.Event {
				continue
			}
			cleaned, err := privacy.CleanJSON(c.Payload)
			if err != nil {
				t.Fatal(err)
			}
			in, err := Adapter{}.Normalize(spec.Sub, cleaned)
			if err != nil {
				t.Fatalf("%s/%s: %v", c.Event, spec.Sub, err)
			}
			out = append(out, replayed{spec.Sub, in})
		}
	}
	return out
}

func field(t *testing.T, raw json.RawMessage, k string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return m[k]
}

func TestQwenCodeReplaySession(t *testing.T) {
	calls := replay(t)
	count := map[string]int{}
	var prompts []platform.Input
	var obs []platform.Input
	for _, c := range calls {
		count[c.event]++
		switch c.event {
		case platform.EventSessionInit:
			prompts = append(prompts, c.in)
		case platform.EventObservation:
			obs = append(obs, c.in)
		}
	}
	if want := map[string]int{"context": 2, "session-init": 10, "observation": 8, "summarize": 2}; !reflect.DeepEqual(count, want) {
		t.Fatalf("events = %v, want %v", count, want)
	}
	// UserPromptSubmit fires before every model request: only each prompt's first call counts.
	var real []string
	for _, p := range prompts {
		if !p.Continuation {
			real = append(real, strings.TrimSpace(p.Prompt))
		} else if p.Prompt != "" {
			t.Errorf("continuation with a prompt: %q", p.Prompt)
		}
	}
	if want := []string{"The greeting in app.py has a typo. Fix it and run the tests.", "What did we change in this project last time?"}; !reflect.DeepEqual(real, want) {
		t.Fatalf("prompts = %q, want %q", real, want)
	}
	var names []string
	var recorded []platform.Input
	for _, o := range obs {
		if o.Bookkeeping {
			if o.ToolName != "tool_search" {
				t.Errorf("%s marked as bookkeeping", o.ToolName)
			}
			continue
		}
		names = append(names, o.ToolName)
		recorded = append(recorded, o)
	}
	if want := []string{"Read", "Read", "Edit", "Bash", "Bash", "mcp__memory__recall", "Read"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	if f := field(t, recorded[1].ToolResponse, "error"); f != "File not found: /home/dev/demo-app/NOTES.md" {
		t.Errorf("failed read: %s", recorded[1].ToolResponse)
	}
	if field(t, recorded[2].ToolInput, "old_string") != `"Helo, "` {
		t.Errorf("edit: %s", recorded[2].ToolInput)
	}
	e, _ := field(t, recorded[3].ToolResponse, "error").(string)
	if !strings.HasPrefix(e, "Exit code 1\nTraceback") || strings.Contains(e, "Signal:") || field(t, recorded[3].ToolResponse, "duration_ms") == nil {
		t.Errorf("failing command: %s", recorded[3].ToolResponse)
	}
	if field(t, recorded[4].ToolResponse, "stdout") != "1 passed" || field(t, recorded[4].ToolResponse, "exit_code") != float64(0) {
		t.Errorf("passing command: %s", recorded[4].ToolResponse)
	}
	// The successful reads' observations ask for their files' context (PostToolUse answers
	// with it); the failed read (PostToolUseFailure) and every other call ask nothing.
	for i, o := range recorded {
		var want []string
		if i == 0 || i == 6 {
			want = []string{"/home/dev/demo-app/app.py"}
		}
		if !reflect.DeepEqual(o.FilePaths, want) {
			t.Errorf("%s observation %d asks for file context of %v, want %v", o.ToolName, i, o.FilePaths, want)
		}
	}
	// An install from before registered file-context beside the observation: it asks
	// nothing now (the hook answers {}).
	for _, c := range platformtest.Session(t, fixtureDir()) {
		if c.Event != "PostToolUse" {
			continue
		}
		if in, err := (Adapter{}).Normalize(platform.EventFileContext, c.Payload); err != nil || len(in.FilePaths) != 0 {
			t.Errorf("file-context asks for %v, %v", in.FilePaths, err)
		}
	}
	if recorded[0].ToolUseID == "" || recorded[0].SessionID == "" || recorded[0].Cwd != "/home/dev/demo-app" {
		t.Errorf("read: %+v", recorded[0])
	}
	for _, c := range calls {
		if c.event == platform.EventSummarize {
			if c.in.LastAssistantMessage == nil || !strings.HasPrefix(*c.in.LastAssistantMessage, "Fixed the typo") {
				t.Errorf("Stop: %+v", c.in)
			}
			break
		}
	}
	if calls[0].in.Reason != "startup" {
		t.Errorf("SessionStart: %+v", calls[0].in)
	}
}

func TestQwenCodeFormat(t *testing.T) {
	cases := []struct {
		event string
		res   platform.Result
		want  string
	}{
		{"context", platform.Result{AdditionalContext: "<memnode-context>a & b</memnode-context>"}, `{"hookSpecificOutput":{"additionalContext":"<memnode-context>a & b</memnode-context>","hookEventName":"SessionStart"}}`},
		{"session-init", platform.Result{AdditionalContext: "x"}, `{"hookSpecificOutput":{"additionalContext":"x","hookEventName":"UserPromptSubmit"}}`},
		{"session-init", platform.Result{}, `{}`},
		{"observation", platform.Result{AdditionalContext: "y"}, `{"hookSpecificOutput":{"additionalContext":"y","hookEventName":"PostToolUse"}}`},
		{"observation", platform.Result{}, `{}`},
		{"file-context", platform.Result{AdditionalContext: "z"}, `{}`},
		{"context", platform.Result{AdditionalContext: "c", SystemMessage: "memnode: 2 memories from 1 session"}, `{"hookSpecificOutput":{"additionalContext":"c","hookEventName":"SessionStart"},"systemMessage":"memnode: 2 memories from 1 session"}`},
		{"context", platform.Result{SystemMessage: "memnode: 0 memories"}, `{"systemMessage":"memnode: 0 memories"}`},
		{"session-init", platform.Result{AdditionalContext: "x", SystemMessage: "only at session start"}, `{"hookSpecificOutput":{"additionalContext":"x","hookEventName":"UserPromptSubmit"}}`},
		{"summarize", platform.Result{}, `{}`},
	}
	for _, c := range cases {
		got, err := Adapter{}.Format(c.event, c.res)
		if err != nil || string(got) != c.want {
			t.Errorf("Format(%s) = %s, %v; want %s", c.event, got, err, c.want)
		}
	}
	if got := (Adapter{}).MCPTool("search"); got != "mcp__memnode__search" {
		t.Errorf("MCPTool = %q", got)
	}
	in, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"tool_name":"mcp__memnode__search"}`))
	if err != nil || !in.Bookkeeping {
		t.Errorf("memnode's own MCP tool is recorded: %+v %v", in, err)
	}
	if _, err := (Adapter{}).Normalize(platform.EventObservation, []byte(`{"error": 1}`)); err == nil {
		t.Error("a wrongly typed field must be an error")
	}
}

func TestQwenCodeTranscript(t *testing.T) {
	p := filepath.Join(fixtureDir(), "transcript-1.jsonl")
	msg, err := Adapter{}.LastAssistantMessage(p)
	if err != nil || !strings.HasPrefix(msg, "Fixed the typo in greet()") {
		t.Errorf("LastAssistantMessage = %q, %v", msg, err)
	}
	prompt, err := Adapter{}.LastUserPrompt(p)
	if err != nil || !strings.HasPrefix(prompt, "The greeting in app.py has a typo.") || strings.Contains(prompt, "qwen:") {
		t.Errorf("LastUserPrompt = %q, %v", prompt, err)
	}
}

// FuzzQwenCodeNormalize: any payload is decoded or rejected, never a panic; the canonical
// call's JSON is valid; a continuation never carries a prompt.
func FuzzQwenCodeNormalize(f *testing.F) {
	for _, c := range platformtest.Session(f, fixtureDir()) {
		f.Add(string(c.Payload))
	}
	f.Add(`{"tool_name":"run_shell_command","error":"Output: x\nExit Code: -3"}`)
	f.Add(`{"tool_name":"edit","tool_input":null,"tool_response":{"returnDisplay":{"filePath":"a","isNewFile":true}}}`)
	f.Fuzz(func(t *testing.T, payload string) {
		for _, ev := range []string{platform.EventObservation, platform.EventFileContext, platform.EventSessionInit} {
			in, err := Adapter{}.Normalize(ev, []byte(payload))
			if err != nil {
				continue
			}
			for _, raw := range []json.RawMessage{in.ToolInput, in.ToolResponse} {
				if raw != nil && !json.Valid(raw) {
					t.Fatalf("invalid JSON %q from %q", raw, payload)
				}
			}
			if in.Continuation && (in.Prompt != "" || ev != platform.EventSessionInit) {
				t.Fatalf("continuation %+v for %s", in, ev)
			}
		}
	})
}

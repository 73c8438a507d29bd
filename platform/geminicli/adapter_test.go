package geminicli

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

// replayed is one recorded hook call as memnode's installed hook would see it.
type replayed struct {
	gemini string // Gemini CLI's event
	event  string // memnode's event
	in     platform.Input
}

// replay runs every recorded call through the hooks memnode installs for its event (one
// per call: an AfterTool of read_file runs the observation hook, which also asks for the
// file's context), cleaned first as the hook does.
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
			out = append(out, replayed{c.Event, spec.Sub, in})
		}
	}
	return out
}

func TestGeminiCLIReplaySession(t *testing.T) {
	calls := replay(t)
	var obs []platform.Input
	count := map[string]int{}
	for _, c := range calls {
		count[c.event]++
		if c.event == platform.EventObservation {
			obs = append(obs, c.in)
		}
	}
	want := map[string]int{"context": 2, "session-init": 2, "observation": 7, "summarize": 2, "session-end": 2}
	if !reflect.DeepEqual(count, want) {
		t.Fatalf("events = %v, want %v", count, want)
	}
	first := calls[0].in
	if first.SessionID == "" || first.Cwd != "/home/dev/demo-app" || first.Reason != "startup" || first.HookEventName != "SessionStart" {
		t.Errorf("SessionStart: %+v", first)
	}
	if p := calls[1].in.Prompt; p != "The greeting in app.py has a typo. Fix it and run the tests." {
		t.Errorf("prompt = %q (the injected <hook_context> and the private part must go)", p)
	}
	names := make([]string, len(obs))
	for i, o := range obs {
		names[i] = o.ToolName
		if o.Bookkeeping {
			t.Errorf("%s marked as bookkeeping", o.ToolName)
		}
	}
	if w := []string{"Read", "Read", "Edit", "Bash", "Bash", "mcp__memory__recall", "Read"}; !reflect.DeepEqual(names, w) {
		t.Fatalf("tools = %v, want %v", names, w)
	}
	field := func(raw json.RawMessage, k string) any {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return m[k]
	}
	if field(obs[0].ToolInput, "file_path") != "/home/dev/demo-app/app.py" || !strings.Contains(field(obs[0].ToolResponse, "output").(string), "def greet") {
		t.Errorf("read: %s → %s", obs[0].ToolInput, obs[0].ToolResponse)
	}
	if e, _ := field(obs[1].ToolResponse, "error").(string); e != "File not found: /home/dev/demo-app/NOTES.md" {
		t.Errorf("failed read: %s", obs[1].ToolResponse)
	}
	if field(obs[2].ToolInput, "old_string") != `"Helo, "` || field(obs[2].ToolResponse, "filePath") != "/home/dev/demo-app/app.py" ||
		!strings.Contains(field(obs[2].ToolResponse, "originalFile").(string), "Helo") {
		t.Errorf("edit: %s → %s", obs[2].ToolInput, obs[2].ToolResponse)
	}
	if e, _ := field(obs[3].ToolResponse, "error").(string); !strings.HasPrefix(e, "Exit code 1\nTraceback") || !strings.Contains(e, "No module named 'test_greeting'") || strings.Contains(e, "PGID") {
		t.Errorf("failing command: %s", obs[3].ToolResponse)
	}
	if field(obs[4].ToolResponse, "stdout") != "1 passed" || field(obs[4].ToolResponse, "exit_code") != float64(0) {
		t.Errorf("passing command: %s", obs[4].ToolResponse)
	}
	// The reads' observations ask for their files' context; nothing else does.
	for i, o := range obs {
		var want []string
		switch i {
		case 0, 6:
			want = []string{"/home/dev/demo-app/app.py"}
		case 1:
			want = []string{"/home/dev/demo-app/NOTES.md"}
		}
		if !reflect.DeepEqual(o.FilePaths, want) {
			t.Errorf("%s observation %d asks for file context of %v, want %v", o.ToolName, i, o.FilePaths, want)
		}
	}
	// An install from before registered file-context beside the observation: it asks
	// nothing now (the hook answers {}).
	for _, c := range platformtest.Session(t, fixtureDir()) {
		if c.Event != "AfterTool" {
			continue
		}
		if in, err := (Adapter{}).Normalize(platform.EventFileContext, c.Payload); err != nil || len(in.FilePaths) != 0 {
			t.Errorf("file-context asks for %v, %v", in.FilePaths, err)
		}
	}
	var stop platform.Input
	for _, c := range calls {
		if c.event == platform.EventSummarize {
			stop = c.in
			break
		}
	}
	if stop.LastAssistantMessage == nil || !strings.HasPrefix(*stop.LastAssistantMessage, "Let me look at the code.") || stop.StopHookActive {
		t.Errorf("AfterAgent: %+v", stop)
	}
	if end := calls[len(calls)-1]; end.event != platform.EventSessionEnd || end.in.Reason != "exit" {
		t.Errorf("SessionEnd: %+v", end)
	}
}

func TestGeminiCLIBookkeepingAndErrors(t *testing.T) {
	for tool, want := range map[string]bool{"write_todos": true, "mcp_memnode_search": true, "mcp_github_create_issue": false, "read_file": false, "run_shell_command": false} {
		in, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"tool_name":"`+tool+`"}`))
		if err != nil || in.Bookkeeping != want {
			t.Errorf("%s: bookkeeping %v, want %v (%v)", tool, in.Bookkeeping, want, err)
		}
	}
	if _, err := (Adapter{}).Normalize(platform.EventObservation, []byte(`{"tool_name": 3}`)); err == nil {
		t.Error("a wrongly typed field must be an error")
	}
	if _, err := (Adapter{}).Normalize(platform.EventObservation, []byte(`{"tool_name": "x", "tool_response": "str"}`)); err == nil {
		t.Error("a tool_response that is not an object must be an error")
	}
	in, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"tool_name":"read_file","tool_input":{"file_path":"a.go","start_line":10,"end_line":19}}`))
	if err != nil || field(t, in.ToolInput, "offset") != float64(10) || field(t, in.ToolInput, "limit") != float64(10) || in.ToolResponse != nil {
		t.Errorf("line range: %s %s %v", in.ToolInput, in.ToolResponse, err)
	}
	if got := (Adapter{}).MCPTool("search"); got != "mcp_memnode_search" {
		t.Errorf("MCPTool = %q", got)
	}
}

func field(t *testing.T, raw json.RawMessage, k string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return m[k]
}

func TestGeminiCLIFormat(t *testing.T) {
	cases := []struct {
		event string
		res   platform.Result
		want  string
	}{
		{"context", platform.Result{AdditionalContext: "<memnode-context>a & b</memnode-context>"}, `{"hookSpecificOutput":{"additionalContext":"<memnode-context>a & b</memnode-context>","hookEventName":"SessionStart"}}`},
		{"context", platform.Result{}, `{}`},
		{"session-init", platform.Result{AdditionalContext: "x"}, `{"hookSpecificOutput":{"additionalContext":"x","hookEventName":"BeforeAgent"}}`},
		{"observation", platform.Result{AdditionalContext: "y"}, `{"hookSpecificOutput":{"additionalContext":"y","hookEventName":"AfterTool"}}`},
		{"observation", platform.Result{}, `{}`},
		{"file-context", platform.Result{AdditionalContext: "z"}, `{}`},
		{"context", platform.Result{AdditionalContext: "c", SystemMessage: "memnode: 2 memories from 1 session"}, `{"hookSpecificOutput":{"additionalContext":"c","hookEventName":"SessionStart"},"systemMessage":"memnode: 2 memories from 1 session"}`},
		{"context", platform.Result{SystemMessage: "memnode: 0 memories"}, `{"systemMessage":"memnode: 0 memories"}`},
		{"session-init", platform.Result{AdditionalContext: "x", SystemMessage: "only at session start"}, `{"hookSpecificOutput":{"additionalContext":"x","hookEventName":"BeforeAgent"}}`},
		{"summarize", platform.Result{}, `{}`},
		{"session-end", platform.Result{}, `{}`},
	}
	for _, c := range cases {
		got, err := Adapter{}.Format(c.event, c.res)
		if err != nil || string(got) != c.want {
			t.Errorf("Format(%s) = %s, %v; want %s", c.event, got, err, c.want)
		}
	}
}

func TestShellOutput(t *testing.T) {
	cases := []struct {
		text, out string
		code      int
		ok        bool
	}{
		{"<untrusted_context>\nOutput: a\nb\nExit Code: 2\nProcess Group PGID: 7\n</untrusted_context>", "a\nb", 2, true},
		{"<untrusted_context>\nOutput: 1 passed\nProcess Group PGID: 1038\n</untrusted_context>", "1 passed", 0, true},
		{"Command: ls\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0\nSignal: (none)", "", 0, true},
		{"Command: x\nDirectory: (root)\nOutput: \nError: spawn failed\nExit Code: 127", "spawn failed", 127, true},
		{"no report", "", 0, false},
	}
	for _, c := range cases {
		out, code, ok := ShellOutput(c.text)
		if out != c.out || code != c.code || ok != c.ok {
			t.Errorf("ShellOutput(%q) = %q, %d, %v; want %q, %d, %v", c.text, out, code, ok, c.out, c.code, c.ok)
		}
	}
}

func TestGeminiCLITranscript(t *testing.T) {
	p := filepath.Join(fixtureDir(), "transcript-1.jsonl")
	msg, err := Adapter{}.LastAssistantMessage(p)
	if err != nil || msg != `Fixed the typo in greet(): it now returns "Hello, <name>", and python3 test_app.py passes.` {
		t.Errorf("LastAssistantMessage = %q, %v", msg, err)
	}
	prompt, err := Adapter{}.LastUserPrompt(p)
	if err != nil || !strings.HasPrefix(prompt, "The greeting in app.py has a typo.") || strings.Contains(prompt, "hook_context") {
		t.Errorf("LastUserPrompt = %q, %v", prompt, err)
	}
	if _, err := (Adapter{}).LastAssistantMessage(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing transcript: no error")
	}
}

// FuzzGeminiCLINormalize: any payload is decoded or rejected, never a panic, and what comes
// out is valid JSON wherever the canonical call holds JSON.
func FuzzGeminiCLINormalize(f *testing.F) {
	for _, c := range platformtest.Session(f, fixtureDir()) {
		f.Add(string(c.Payload))
	}
	f.Add(`{"tool_name":"run_shell_command","tool_response":{"llmContent":"Output:\nExit Code: x"}}`)
	f.Add(`{"tool_name":"mcp__","tool_input":[1],"tool_response":{"llmContent":[{"text":1}]}}`)
	f.Add(`{"tool_name":"replace","tool_response":{"returnDisplay":{"filePath":"a"},"error":{"message":""}}}`)
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
			if strings.Contains(in.Prompt, "<hook_context>") && strings.Contains(in.Prompt, "</hook_context>") &&
				strings.Index(in.Prompt, "<hook_context>") < strings.LastIndex(in.Prompt, "</hook_context>") {
				t.Fatalf("hook context kept in %q", in.Prompt)
			}
		}
	})
}

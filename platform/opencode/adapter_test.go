package opencode

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

func TestOpenCodeReplaySession(t *testing.T) {
	count := map[string]int{}
	var obs, prompts, contexts, stops, reads []platform.Input
	for _, c := range platformtest.Session(t, fixtureDir()) {
		event, payload := platformtest.OpenCodePluginEvent(t, c)
		if event == "" {
			continue
		}
		cleaned, err := privacy.CleanJSON(payload)
		if err != nil {
			t.Fatal(err)
		}
		in, err := Adapter{}.Normalize(event, cleaned)
		if err != nil {
			t.Fatalf("%s: %v", c.Event, err)
		}
		count[event]++
		switch event {
		case platform.EventObservation:
			obs = append(obs, in)
		case platform.EventSessionInit:
			prompts = append(prompts, in)
		case platform.EventContext:
			contexts = append(contexts, in)
		case platform.EventSummarize:
			stops = append(stops, in)
		case platform.EventFileContext:
			reads = append(reads, in)
		}
	}
	if count[platform.EventObservation] != 7 || count[platform.EventSessionInit] != 2 || count[platform.EventSummarize] != 2 || count[platform.EventContext] == 0 {
		t.Fatalf("events = %v", count)
	}
	var readPaths []string
	for _, r := range reads {
		readPaths = append(readPaths, r.FilePaths...)
		if r.ToolUseID == "" || r.Cwd != "/home/dev/demo-app" {
			t.Errorf("file-context: %+v", r)
		}
	}
	if want := []string{"/home/dev/demo-app/app.py", "/home/dev/demo-app/NOTES.md", "/home/dev/demo-app/app.py"}; !reflect.DeepEqual(readPaths, want) {
		t.Errorf("file-context paths = %v, want %v", readPaths, want)
	}
	if strings.TrimSpace(prompts[0].Prompt) != "The greeting in app.py has a typo. Fix it and run the tests." || prompts[1].Prompt != "What did we change in this project last time?" {
		t.Errorf("prompts: %q, %q (the quotes of `opencode run` and the private part must go)", prompts[0].Prompt, prompts[1].Prompt)
	}
	if contexts[0].SessionID == "" || contexts[0].Cwd != "/home/dev/demo-app" {
		t.Errorf("context: %+v", contexts[0])
	}
	var names []string
	for _, o := range obs {
		names = append(names, o.ToolName)
		if o.Bookkeeping || o.SessionID == "" || o.ToolUseID == "" {
			t.Errorf("%s: %+v", o.ToolName, o)
		}
	}
	if want := []string{"Read", "Read", "Edit", "Bash", "Bash", "memory_recall", "Read"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tools = %v, want %v", names, want)
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
	if obs[1].HookEventName != "tool.error" || field(obs[1].ToolResponse, "error") != "File not found: /home/dev/demo-app/NOTES.md" || field(obs[1].ToolInput, "file_path") != "/home/dev/demo-app/NOTES.md" {
		t.Errorf("failed read: %s → %s", obs[1].ToolInput, obs[1].ToolResponse)
	}
	if field(obs[2].ToolInput, "old_string") != `"Helo, "` || field(obs[2].ToolInput, "new_string") != `"Hello, "` {
		t.Errorf("edit: %s", obs[2].ToolInput)
	}
	if e, _ := field(obs[3].ToolResponse, "error").(string); !strings.HasPrefix(e, "Exit code 1\nTraceback") {
		t.Errorf("failing command: %s", obs[3].ToolResponse)
	}
	if field(obs[4].ToolResponse, "stdout") != "1 passed\n" || field(obs[4].ToolResponse, "exit_code") != float64(0) {
		t.Errorf("passing command: %s", obs[4].ToolResponse)
	}
	if !strings.Contains(field(obs[5].ToolResponse, "output").(string), "RECALL-RESULT") {
		t.Errorf("MCP call: %s", obs[5].ToolResponse)
	}
	if stops[0].SessionID == "" || stops[0].LastAssistantMessage == nil || *stops[0].LastAssistantMessage != "Fixed the typo." {
		t.Errorf("session.idle: %+v", stops[0])
	}
}

func TestOpenCodeFormatAndBookkeeping(t *testing.T) {
	for _, c := range []struct {
		event, ctx, want string
	}{
		{platform.EventContext, "<memnode-context>a & b</memnode-context>", `{"additionalContext":"<memnode-context>a & b</memnode-context>"}`},
		{platform.EventContext, "", `{}`},
		{platform.EventSessionInit, "x", `{"additionalContext":"x"}`},
		{platform.EventFileContext, "<memnode-context>app.py</memnode-context>", `{"additionalContext":"<memnode-context>app.py</memnode-context>"}`},
		{platform.EventObservation, "x", `{}`},
	} {
		got, err := Adapter{}.Format(c.event, platform.Result{AdditionalContext: c.ctx})
		if err != nil || string(got) != c.want {
			t.Errorf("Format(%s) = %s, %v; want %s", c.event, got, err, c.want)
		}
	}
	for tool, want := range map[string]bool{"todowrite": true, "memnode_search": true, "memory_recall": false, "bash": false} {
		in, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"input":{"tool":"`+tool+`","sessionID":"s"},"output":{}}`))
		if err != nil || in.Bookkeeping != want {
			t.Errorf("%s: bookkeeping %v, want %v (%v)", tool, in.Bookkeeping, want, err)
		}
	}
	if got := (Adapter{}).MCPTool("search"); got != "memnode_search" {
		t.Errorf("MCPTool = %q", got)
	}
	if _, err := (Adapter{}).Normalize(platform.EventObservation, []byte(`{"input":{"tool":1}}`)); err == nil {
		t.Error("a wrongly typed field must be an error")
	}
	if unquote(`"a "b" c"`) != `"a "b" c"` || unquote(`"ab"`) != "ab" {
		t.Error("unquote")
	}
}

// FuzzOpenCodeNormalize: any payload is decoded or rejected, never a panic; the canonical
// call's JSON is valid.
func FuzzOpenCodeNormalize(f *testing.F) {
	for _, c := range platformtest.Session(f, fixtureDir()) {
		f.Add(string(c.Payload))
	}
	f.Add(`{"event":{"type":"message.part.updated","properties":{"part":{"type":"tool","state":{"status":"error","input":[1]}}}}}`)
	f.Add(`{"input":{"tool":"bash","args":null},"output":{"output":3,"metadata":{"exit":-1}}}`)
	f.Fuzz(func(t *testing.T, payload string) {
		for _, ev := range []string{platform.EventObservation, platform.EventSessionInit, platform.EventContext, platform.EventSummarize, platform.EventFileContext} {
			in, err := Adapter{}.Normalize(ev, []byte(payload))
			if err != nil {
				continue
			}
			for _, raw := range []json.RawMessage{in.ToolInput, in.ToolResponse} {
				if raw != nil && !json.Valid(raw) {
					t.Fatalf("invalid JSON %q from %q", raw, payload)
				}
			}
		}
	})
}

package copilot

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
)

const fixtures = "../../testdata/fixtures/copilot"

// memnodeEvent maps the recorded Copilot events onto the memnode events the installer
// registers them under ("" for events memnode does not hook).
var memnodeEvent = map[string]string{
	"sessionStart": platform.EventContext, "userPromptSubmitted": platform.EventSessionInit,
	"postToolUse": platform.EventObservation, "postToolUseFailure": platform.EventObservation,
	"agentStop": platform.EventSummarize, "sessionEnd": platform.EventSessionEnd,
}

func TestNormalizeRecordedSession(t *testing.T) {
	var calls []string
	for _, c := range platformtest.Session(t, fixtures) {
		ev := memnodeEvent[c.Event]
		if ev == "" {
			continue
		}
		in, err := Adapter{}.Normalize(ev, c.Payload)
		if err != nil {
			t.Fatalf("%s: %v", c.Event, err)
		}
		if in.SessionID == "" || in.Cwd != "/home/dev/demo-app" {
			t.Fatalf("%s: common fields %+v", c.Event, in)
		}
		if ev != platform.EventObservation {
			continue
		}
		var f platform.Failure
		failed := json.Unmarshal(in.ToolResponse, &f) == nil && f.Error != ""
		tag := in.ToolName
		if failed {
			tag += "!"
		}
		calls = append(calls, tag)
	}
	want := "Read Read! Edit Bash! Bash memory-recall Read"
	if got := strings.Join(calls, " "); got != want {
		t.Fatalf("canonical calls %q, want %q", got, want)
	}
}

func TestCanonicalShapes(t *testing.T) {
	norm := func(p string) platform.Input {
		t.Helper()
		in, err := Adapter{}.Normalize(platform.EventObservation, []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	edit := norm(`{"sessionId":"s","cwd":"/p","toolName":"edit","toolArgs":{"path":"a.py","old_str":"x","new_str":"y"},"toolResult":{"resultType":"success","textResultForLlm":"ok"}}`)
	if edit.ToolName != "Edit" || string(edit.ToolInput) != `{"file_path":"/p/a.py","new_string":"y","old_string":"x"}` {
		t.Fatalf("edit: %s %s", edit.ToolName, edit.ToolInput)
	}
	bash := norm(`{"sessionId":"s","cwd":"/p","toolName":"bash","toolArgs":{"command":"make"},"toolResult":{"resultType":"success","textResultForLlm":"done\n<shellId: 3 completed with exit code 0>"}}`)
	if string(bash.ToolResponse) != `{"exit_code":0,"stdout":"done"}` {
		t.Fatalf("bash: %s", bash.ToolResponse)
	}
	mine := norm(`{"sessionId":"s","cwd":"/p","toolName":"memnode-search","toolArgs":{"query":"q"}}`)
	if !mine.Bookkeeping || mine.ToolName != "mcp__memnode__search" {
		t.Fatalf("memnode's own MCP tool: %+v", mine)
	}
}

func TestFormatIsFlat(t *testing.T) {
	for _, tc := range []struct{ event, ctx, want string }{
		{platform.EventContext, "C", `{"additionalContext":"C"}`},
		{platform.EventSessionInit, "<x>", `{"additionalContext":"<x>"}`},
		{platform.EventSessionInit, "", `{}`},
		{platform.EventObservation, "", `{}`},
		{platform.EventFileContext, "C", `{}`},
	} {
		got, err := Adapter{}.Format(tc.event, platform.Result{AdditionalContext: tc.ctx})
		if err != nil || string(got) != tc.want {
			t.Errorf("Format(%s, %q) = %s, %v; want %s", tc.event, tc.ctx, got, err, tc.want)
		}
	}
}

func TestLastAssistantMessageReadsEvents(t *testing.T) {
	got, err := Adapter{}.LastAssistantMessage(filepath.Join(fixtures, "transcript-1.jsonl"))
	if err != nil || got == "" {
		t.Fatalf("last message %q, %v", got, err)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, c := range platformtest.Session(f, fixtures) {
		f.Add(string(c.Payload))
	}
	f.Fuzz(func(t *testing.T, p string) {
		in, err := Adapter{}.Normalize(platform.EventObservation, []byte(p))
		if err == nil && in.ToolResponse != nil && !json.Valid(in.ToolResponse) {
			t.Fatalf("invalid tool response %q", in.ToolResponse)
		}
	})
}

// TestCopilotFileContextHook: the postToolUse observation of a successful view also asks
// what memnode knows about its file (a relative path resolved against cwd) and gets it back
// as postToolUse's flat additionalContext; other tools and failed views ask nothing, and
// file-context (which an old install registered as a second hook) asks nothing either.
func TestCopilotFileContextHook(t *testing.T) {
	view := []byte(`{"sessionId":"s","cwd":"/w","toolName":"view",
		"toolArgs":{"path":"app.py"},"toolResult":{"resultType":"success","textResultForLlm":"1. def greet"}}`)
	in, err := Adapter{}.Normalize(platform.EventObservation, view)
	if err != nil || len(in.FilePaths) != 1 || in.FilePaths[0] != "/w/app.py" || in.HookEventName != "postToolUse" || in.ToolName != "Read" {
		t.Fatalf("%+v, %v", in, err)
	}
	if old, _ := (Adapter{}).Normalize(platform.EventFileContext, view); len(old.FilePaths) != 0 {
		t.Errorf("file-context still asks, beside the observation: %v", old.FilePaths)
	}
	// A bash command that reads files asks about them as Codex's shell reads do (relative
	// paths are the hook's to resolve against cwd).
	bash, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"sessionId":"s","cwd":"/w","toolName":"bash",
		"toolArgs":{"command":"sed -n 1,40p app.py && head -n 5 /w/NOTES.md","description":"Read"},"toolResult":{"resultType":"success","textResultForLlm":"def greet"}}`))
	if err != nil || !slices.Equal(bash.FilePaths, []string{"app.py", "/w/NOTES.md"}) || bash.ToolName != "Bash" {
		t.Errorf("bash read: %+v, %v", bash, err)
	}
	for _, raw := range []string{
		`{"toolName":"bash","toolArgs":{"command":"python3 test_app.py"},"toolResult":{"resultType":"success"}}`,
		`{"toolName":"bash","toolArgs":{"command":"cat app.py"},"toolResult":{"resultType":"failure"}}`,
		`{"toolName":"bash","toolArgs":"cat app.py","toolResult":{"resultType":"success"}}`,
		`{"toolName":"view","toolArgs":{"path":"/w/x"},"error":"Path does not exist"}`,
	} {
		if in, _ := (Adapter{}).Normalize(platform.EventObservation, []byte(raw)); len(in.FilePaths) != 0 {
			t.Errorf("%s asked for file context: %v", raw, in.FilePaths)
		}
	}
	b, err := Adapter{}.Format(platform.EventObservation, platform.Result{AdditionalContext: "<memnode-context>x</memnode-context>"})
	if err != nil || string(b) != `{"additionalContext":"<memnode-context>x</memnode-context>"}` {
		t.Errorf("Format = %s, %v", b, err)
	}
}

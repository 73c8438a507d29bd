package cursor

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
	"github.com/memnode/memnode/privacy"
)

func fixtureDir() string { return filepath.Join("..", "..", Platform().Fixtures) }

// replay runs every recorded call through the hook memnode installs for its Cursor event,
// cleaned first as the hook does; calls of events memnode does not install are skipped.
func replay(t *testing.T) (events []string, ins []platform.Input) {
	t.Helper()
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
				t.Fatalf("%s: %v", c.Event, err)
			}
			events, ins = append(events, spec.Sub), append(ins, in)
		}
	}
	return events, ins
}

func TestCursorReplaySession(t *testing.T) {
	events, ins := replay(t)
	want := []string{"context", "session-init", "observation", "observation", "observation", "observation",
		"observation", "observation", "observation", "observation", "summarize", "session-end"}
	if strings.Join(events, ",") != strings.Join(want, ",") {
		t.Fatalf("events = %v\nwant %v", events, want)
	}
	for i, in := range ins {
		if in.SessionID != "c7d9e0f1-2a3b-4c5d-8e9f-0a1b2c3d4e5f" || in.Cwd != "/home/dev/demo-app" {
			t.Errorf("%d %s: session %q cwd %q", i, in.HookEventName, in.SessionID, in.Cwd)
		}
	}
	if p := strings.TrimSpace(ins[1].Prompt); p != "The greeting in app.py has a typo. Fix it and run the tests." {
		t.Errorf("prompt = %q (the private part must go)", p)
	}
	var recorded []string
	for i, in := range ins {
		if events[i] == platform.EventObservation && !in.Bookkeeping {
			recorded = append(recorded, in.HookEventName+":"+in.ToolName)
		}
	}
	wantRec := []string{"postToolUse:Read", "afterShellExecution:Bash", "afterFileEdit:Edit", "afterShellExecution:Bash", "postToolUseFailure:Read"}
	if strings.Join(recorded, ",") != strings.Join(wantRec, ",") {
		t.Fatalf("recorded calls = %v\nwant %v (Shell/StrReplace via postToolUse and memnode's own search are left out)", recorded, wantRec)
	}
	read := ins[2]
	var ri struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(read.ToolInput, &ri) != nil || ri.FilePath != "/home/dev/demo-app/app.py" {
		t.Errorf("Read input = %s, want file_path from target_file", read.ToolInput)
	}
	if !strings.Contains(string(read.ToolResponse), "Helo, world") {
		t.Errorf("Read response = %s", read.ToolResponse)
	}
	var bash struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(ins[3].ToolInput, &bash) != nil || bash.Command != "python -m pytest -q" || !strings.Contains(string(ins[3].ToolResponse), "1 failed") {
		t.Errorf("failing run: %s → %s", ins[3].ToolInput, ins[3].ToolResponse)
	}
	var em map[string]string
	if json.Unmarshal(ins[5].ToolInput, &em) != nil || em["file_path"] != "/home/dev/demo-app/app.py" || em["new_string"] != "return 'Hello, world'" {
		t.Errorf("edit input = %s", ins[5].ToolInput)
	}
	var f platform.Failure
	if json.Unmarshal(ins[9].ToolResponse, &f) != nil || !strings.Contains(f.Error, "File not found") || f.DurationMS != 3 {
		t.Errorf("failure = %s", ins[9].ToolResponse)
	}
	if m := ins[10].LastAssistantMessage; m == nil || !strings.Contains(*m, "Fixed the typo") {
		t.Errorf("summary message = %v", m)
	}
	if ins[11].Reason != "completed" {
		t.Errorf("session end reason = %q", ins[11].Reason)
	}
}

func TestCursorFormat(t *testing.T) {
	for _, tc := range []struct {
		event string
		res   platform.Result
		want  string
	}{
		{platform.EventContext, platform.Result{AdditionalContext: "<memnode-context>x & y</memnode-context>"}, `{"additional_context":"<memnode-context>x & y</memnode-context>"}`},
		{platform.EventContext, platform.Result{}, `{}`},
		{platform.EventSessionInit, platform.Result{}, `{"continue":true}`},
		{platform.EventObservation, platform.Result{}, `{}`},
		{platform.EventSummarize, platform.Result{}, `{}`},
	} {
		b, err := Adapter{}.Format(tc.event, tc.res)
		if err != nil || string(b) != tc.want {
			t.Errorf("Format(%s) = %s, %v; want %s", tc.event, b, err, tc.want)
		}
	}
}

func TestCursorInputAsString(t *testing.T) {
	in, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"hook_event_name":"postToolUse","conversation_id":"c","workspace_roots":["/w"],
		"tool_name":"Grep","tool_input":"{\"pattern\":\"greet\"}","tool_output":"app.py:1:def greet()"}`))
	if err != nil {
		t.Fatal(err)
	}
	if in.ToolName != "Grep" || string(in.ToolInput) != `{"pattern":"greet"}` || !strings.Contains(string(in.ToolResponse), `"output":"app.py:1:def greet()"`) {
		t.Fatalf("%+v / %s / %s", in, in.ToolInput, in.ToolResponse)
	}
}

// FuzzCursorNormalize: any payload decodes or fails cleanly, never panics, and a decoded
// tool call's input and response are valid JSON.
func FuzzCursorNormalize(f *testing.F) {
	for _, c := range platformtest.Session(f, fixtureDir()) {
		f.Add([]byte(c.Payload))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		in, err := Adapter{}.Normalize(platform.EventObservation, raw)
		if err != nil {
			return
		}
		for _, b := range [][]byte{in.ToolInput, in.ToolResponse} {
			if len(b) > 0 && !json.Valid(b) {
				t.Fatalf("invalid JSON %q from %q", b, raw)
			}
		}
	})
}

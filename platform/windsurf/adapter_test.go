package windsurf

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

func TestWindsurfReplaySession(t *testing.T) {
	var events []string
	var ins []platform.Input
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
	want := "session-init,observation,observation,observation,observation,observation,observation,summarize"
	if strings.Join(events, ",") != want {
		t.Fatalf("events = %v, want %s", events, want)
	}
	for i, in := range ins {
		if in.SessionID != "traj-5b1e2c3d-4f50-4a6b-9c7d-8e9f0a1b2c3d" {
			t.Errorf("%d: session %q", i, in.SessionID)
		}
	}
	if p := strings.TrimSpace(ins[0].Prompt); p != "The greeting in app.py has a typo. Fix it and run the tests." {
		t.Errorf("prompt = %q (the private part must go)", p)
	}
	var got []string
	for i, in := range ins {
		if events[i] == platform.EventObservation && !in.Bookkeeping {
			got = append(got, in.ToolName)
		}
	}
	if strings.Join(got, ",") != "Read,Bash,Edit,Bash,mcp__github__list_commits" {
		t.Fatalf("recorded tools = %v (memnode's own search is left out)", got)
	}
	var bash map[string]string
	if json.Unmarshal(ins[2].ToolInput, &bash) != nil || bash["command"] != "python -m pytest -q" || ins[2].Cwd != "/home/dev/demo-app" {
		t.Errorf("run: %s cwd %q", ins[2].ToolInput, ins[2].Cwd)
	}
	var ed map[string]string
	if json.Unmarshal(ins[3].ToolInput, &ed) != nil || ed["file_path"] != "/home/dev/demo-app/app.py" || ed["new_string"] != "return 'Hello, world'" {
		t.Errorf("edit: %s", ins[3].ToolInput)
	}
	if r := string(ins[6].ToolResponse); !strings.Contains(r, `"result":[{"sha":"abc123"`) {
		t.Errorf("MCP result = %s", r)
	}
	if m := ins[7].LastAssistantMessage; m == nil || !strings.Contains(*m, "Fixed the typo") {
		t.Errorf("summary input = %v", m)
	}
	for _, ev := range []string{platform.EventSessionInit, platform.EventObservation, platform.EventSummarize} {
		if b, err := (Adapter{}).Format(ev, platform.Result{AdditionalContext: "x"}); err != nil || string(b) != "{}" {
			t.Errorf("Format(%s) = %s, %v", ev, b, err)
		}
	}
}

// FuzzWindsurfNormalize: any payload decodes or fails cleanly, and a tool call's input and
// response are valid JSON.
func FuzzWindsurfNormalize(f *testing.F) {
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

package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
)

// TestReplayFixtureTranscript: the captured transcript becomes SessionStart, the prompt,
// one PostToolUse per tool result (its input from the tool_use; a call without a result fires none), Stop with the last answer,
// SessionEnd; the IDs are the same on a second read.
func TestReplayFixtureTranscript(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", "claude-code", "transcript.jsonl"))
	if err != nil {
		t.Skipf("fixture not here: %v", err)
	}
	rep, err := Replay(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	recs := rep.Calls
	if rep.BadLines != 0 || rep.Cwd == "" {
		t.Errorf("bad lines %d, cwd %q", rep.BadLines, rep.Cwd)
	}
	var events []string
	for _, r := range recs {
		events = append(events, r.Event)
		var p map[string]any
		if err := json.Unmarshal(r.Payload, &p); err != nil || p["session_id"] != "5f0c9a3e-1b2d-4c7e-9f10-aa11bb22cc33" {
			t.Errorf("%s payload %s: %v", r.Event, r.Payload, err)
		}
		if _, err := (Adapter{}).Normalize(r.Event, r.Payload); err != nil {
			t.Errorf("the adapter refuses a replayed %s: %v", r.Event, err)
		}
	}
	want := "context session-init observation summarize session-end" // only the Read has its result in the fixture
	if strings.Join(events, " ") != want {
		t.Fatalf("events %v, want %s", events, want)
	}
	var stop struct {
		Last string `json:"last_assistant_message"`
	}
	json.Unmarshal(recs[3].Payload, &stop)
	if !strings.HasPrefix(stop.Last, "Fixed: the middleware ignored the parse error") {
		t.Errorf("Stop's answer %q", stop.Last)
	}
	again, _ := Replay(strings.NewReader(string(b)))
	for i := range recs {
		if recs[i].ID != again.Calls[i].ID {
			t.Errorf("IDs differ between two reads: %s %s", recs[i].ID, again.Calls[i].ID)
		}
	}
	if !strings.Contains(recs[2].TurnPrompt, "<private>staging password") {
		t.Errorf("the tool call does not carry its turn's prompt")
	}
}

func FuzzReplay(f *testing.F) {
	f.Add(`{"type":"user","sessionId":"s","uuid":"u","message":{"role":"user","content":"hi"}}`)
	f.Add(`{"type":"assistant","sessionId":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}` + "\n" +
		`{"type":"user","sessionId":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"x"}],"is_error":true}]}}`)
	f.Fuzz(func(t *testing.T, s string) {
		rep, err := Replay(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, r := range rep.Calls {
			if !json.Valid(r.Payload) || r.ID == "" {
				t.Fatalf("bad record %+v", r)
			}
			_ = platform.Recorded(r)
		}
	})
}

package antigravity

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
	"github.com/memnode/memnode/privacy"
)

func fixtureDir() string { return filepath.Join("..", "..", Platform().Fixtures) }

// withTranscript points a payload's transcriptPath at the fixture transcript.
func withTranscript(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Join(fixtureDir(), "transcript_full.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	m["transcriptPath"] = abs
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replay runs every recorded call through the hook memnode installs for its agy event,
// cleaned first as the hook does; PostInvocation, which memnode does not install, is
// skipped.
func replay(t *testing.T) (events []string, ins []platform.Input) {
	t.Helper()
	for _, c := range platformtest.Session(t, fixtureDir()) {
		for _, spec := range HookSpecs() {
			if spec.Event != c.Event {
				continue
			}
			cleaned, err := privacy.CleanJSON(withTranscript(t, c.Payload))
			if err != nil {
				t.Fatal(err)
			}
			in, err := Adapter{}.Normalize(spec.Sub, cleaned)
			if err != nil {
				t.Fatalf("%s: %v", c.Event, err)
			}
			if in.HookEventName != c.Event {
				t.Errorf("payload of %s read as %s", c.Event, in.HookEventName)
			}
			events, ins = append(events, spec.Sub), append(ins, in)
		}
	}
	return events, ins
}

func TestAntigravityReplaySession(t *testing.T) {
	events, ins := replay(t)
	if len(events) != 18 || events[0] != platform.EventSessionInit || events[17] != platform.EventSummarize {
		t.Fatalf("events = %v", events)
	}
	for i, in := range ins {
		if in.SessionID != "5e1f0c2a-7b3d-4e8f-9a6b-1c2d3e4f5a6b" || in.Cwd != "/home/dev/demo-app" {
			t.Errorf("%d %s: session %q cwd %q", i, in.HookEventName, in.SessionID, in.Cwd)
		}
	}
	// The prompt comes from the transcript, without agy's metadata; the hook cleans it.
	if p := privacy.Clean(ins[0].Prompt); ins[0].Continuation || strings.TrimSpace(p) != "The greeting in app.py has a typo. Fix it and run the tests." {
		t.Errorf("first prompt = %q (continuation %v)", p, ins[0].Continuation)
	}
	if !ins[3].Continuation || ins[3].Prompt != "" {
		t.Errorf("second model call of the prompt: %+v, want a continuation", ins[3])
	}

	var recorded []string
	for i, in := range ins {
		if events[i] == platform.EventObservation && !in.Bookkeeping {
			recorded = append(recorded, in.HookEventName+":"+in.ToolName)
		}
	}
	if failedStep != apitype.ToolFailedStep {
		t.Fatalf("failedStep %q is not the node's apitype.ToolFailedStep %q", failedStep, apitype.ToolFailedStep)
	}
	want := []string{"PreToolUse:Read", "PreToolUse:Edit", "PreToolUse:Bash", "PostToolUse:" + failedStep, "PreToolUse:MultiEdit", "PreToolUse:Bash"}
	if strings.Join(recorded, ",") != strings.Join(want, ",") {
		t.Fatalf("recorded calls = %v\nwant %v (successful PostToolUse, list_permissions and memnode's own search are left out)", recorded, want)
	}

	var read map[string]any
	if json.Unmarshal(ins[1].ToolInput, &read) != nil || read["file_path"] != "/home/dev/demo-app/app.py" || read["offset"] != 1.0 || read["limit"] != 40.0 || len(read) != 3 {
		t.Errorf("Read input = %s, want the double-encoded AbsolutePath decoded and lines 1..40", ins[1].ToolInput)
	}
	var edit map[string]string
	if json.Unmarshal(ins[4].ToolInput, &edit) != nil || edit["file_path"] != "/home/dev/demo-app/app.py" ||
		edit["old_string"] != "return 'Helo, world'" || edit["new_string"] != "return 'Hello, world'" {
		t.Errorf("Edit input = %s", ins[4].ToolInput)
	}
	var bash map[string]string
	if json.Unmarshal(ins[6].ToolInput, &bash) != nil || bash["command"] != "python -m pytest -q" || bash["workdir"] != "/home/dev/demo-app" {
		t.Errorf("Bash input = %s", ins[6].ToolInput)
	}
	var f platform.Failure
	if json.Unmarshal(ins[7].ToolResponse, &f) != nil || f.Error != "exit status 1" || ins[7].ToolUseID != ins[6].ToolUseID {
		t.Errorf("failure = %s (id %q, the failed call's %q)", ins[7].ToolResponse, ins[7].ToolUseID, ins[6].ToolUseID)
	}
	var multi struct {
		FilePath string              `json:"file_path"`
		Edits    []map[string]string `json:"edits"`
	}
	if json.Unmarshal(ins[8].ToolInput, &multi) != nil || multi.FilePath != "/home/dev/demo-app/test_app.py" ||
		len(multi.Edits) != 1 || multi.Edits[0]["new_string"] != "'Hello, world'" {
		t.Errorf("MultiEdit input = %s", ins[8].ToolInput)
	}
	if !ins[12].Bookkeeping || ins[12].ToolName != "mcp__memnode__search" {
		t.Errorf("memnode's own MCP call = %+v, want bookkeeping", ins[12])
	}

	if stop := ins[16]; !stop.StopHookActive {
		t.Errorf("Stop with background tasks running must not summarize: %+v", stop)
	}
	if stop := ins[17]; stop.StopHookActive || stop.Reason != "model_stop" {
		t.Errorf("idle Stop = %+v", stop)
	}
	msg, err := Adapter{}.LastAssistantMessage(ins[17].TranscriptPath)
	if err != nil || !strings.HasPrefix(msg, "Fixed the typo in greet()") {
		t.Errorf("last assistant message = %q, %v", msg, err)
	}
	prompt, err := Adapter{}.LastUserPrompt(ins[17].TranscriptPath)
	if err != nil || !strings.Contains(prompt, "<private>") || strings.Contains(prompt, "ADDITIONAL_METADATA") {
		t.Errorf("last user prompt = %q, %v (raw: the caller cleans it)", prompt, err)
	}
}

// TestAntigravityWithoutTranscript: before agy has written the transcript, a prompt is not
// recorded (nothing to record yet) and a turn has no summary text; neither is an error
// that would fail the agent's hook.
func TestAntigravityWithoutTranscript(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "transcript_full.jsonl")
	raw, _ := json.Marshal(map[string]any{"conversationId": "c", "workspacePaths": []string{"/w"}, "transcriptPath": missing, "invocationNum": 0})
	in, err := Adapter{}.Normalize(platform.EventSessionInit, raw)
	if err != nil || !in.Continuation || in.Prompt != "" {
		t.Fatalf("%+v, %v", in, err)
	}
	// A transcript not yet written up to this execution's prompt holds the previous one: not
	// recorded again.
	stale, _ := json.Marshal(map[string]any{"conversationId": "c", "transcriptPath": filepath.Join(fixtureDir(), "transcript_full.jsonl"),
		"invocationNum": 0, "initialNumSteps": 18})
	if in, err := (Adapter{}).Normalize(platform.EventSessionInit, stale); err != nil || !in.Continuation || in.Prompt != "" {
		t.Errorf("stale transcript: %+v, %v", in, err)
	}
	if _, err := (Adapter{}).LastAssistantMessage(missing); err == nil {
		t.Error("a missing transcript must be reported (the hook then skips the summary)")
	}
}

// TestAntigravityPostToolUseWithToolCall: builds whose PostToolUse carries the call record a
// failure under the tool's own name.
func TestAntigravityPostToolUseWithToolCall(t *testing.T) {
	in, err := Adapter{}.Normalize(platform.EventObservation, []byte(`{"conversationId":"c","stepIdx":3,"error":"open /w/x: no such file",
		"toolCall":{"name":"view_file","args":{"AbsolutePath":"/w/x"}}}`))
	if err != nil || in.HookEventName != "PostToolUse" || in.ToolName != "Read" || in.Bookkeeping {
		t.Fatalf("%+v, %v", in, err)
	}
	if !strings.Contains(string(in.ToolResponse), "no such file") || !strings.Contains(string(in.ToolInput), `"file_path":"/w/x"`) {
		t.Errorf("%s → %s", in.ToolInput, in.ToolResponse)
	}
	ok, _ := Adapter{}.Normalize(platform.EventObservation, []byte(`{"conversationId":"c","stepIdx":3,"error":"","toolCall":{"name":"view_file","args":{}}}`))
	if !ok.Bookkeeping {
		t.Errorf("a successful PostToolUse is recorded twice: %+v", ok)
	}
}

// TestAntigravityFormatIsNeutral: memnode never answers a decision (allow, deny, continue).
func TestAntigravityFormatIsNeutral(t *testing.T) {
	for _, ev := range []string{platform.EventSessionInit, platform.EventObservation, platform.EventSummarize, platform.EventContext} {
		b, err := Adapter{}.Format(ev, platform.Result{AdditionalContext: "ctx"})
		if err != nil || string(b) != "{}" {
			t.Errorf("Format(%s) = %s, %v", ev, b, err)
		}
	}
}

// FuzzAntigravityNormalize: any payload decodes or fails cleanly, never panics, and a
// decoded tool call's input and response are valid JSON.
func FuzzAntigravityNormalize(f *testing.F) {
	for _, c := range platformtest.Session(f, fixtureDir()) {
		f.Add([]byte(c.Payload))
	}
	f.Add([]byte(`{"toolCall":{"name":"multi_replace_file_content","args":{"ReplacementChunks":"[\"{\\\"TargetContent\\\":1}\"]"}}}`))
	f.Add([]byte(`{"toolCall":{"name":"view_file","args":"{\"StartLine\":\"\\\"3\\\"\"}"},"stepIdx":-1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, ev := range []string{platform.EventObservation, platform.EventSummarize} {
			in, err := Adapter{}.Normalize(ev, raw)
			if err != nil {
				continue
			}
			for _, b := range [][]byte{in.ToolInput, in.ToolResponse} {
				if len(b) > 0 && !json.Valid(b) {
					t.Fatalf("invalid JSON %q from %q", b, raw)
				}
			}
		}
	})
}

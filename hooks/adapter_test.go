package hooks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

func fixtureCalls(t testing.TB) []struct {
	Event   string
	Payload json.RawMessage
} {
	t.Helper()
	f, err := os.Open("../testdata/fixtures/claude-code/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []struct {
		Event   string
		Payload json.RawMessage
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, struct {
			Event   string
			Payload json.RawMessage
		}{c.Event, c.Payload})
	}
	return calls
}

func TestClaudeCodeNormalize(t *testing.T) {
	calls := fixtureCalls(t)
	norm := func(i int) Input {
		t.Helper()
		_, cleaned, err := cleanInput(calls[i].Payload)
		if err != nil {
			t.Fatal(err)
		}
		in, err := ClaudeCode{}.Normalize(calls[i].Event, cleaned)
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
	stop, err := ClaudeCode{}.Normalize("summarize", []byte(`{"stop_hook_active":true,"last_assistant_message":"hi"}`))
	if err != nil || !stop.StopHookActive || stop.LastAssistantMessage == nil || *stop.LastAssistantMessage != "hi" {
		t.Errorf("stop: %+v %v", stop, err)
	}
	if _, err := (ClaudeCode{}).Normalize("observation", []byte(`{"tool_name": 3}`)); err == nil {
		t.Error("a wrongly typed field must be an error")
	}
	if in, _ := (ClaudeCode{}).Normalize("observation", []byte(`{"tool_name":"X","tool_input":null}`)); in.ToolInput != nil {
		t.Errorf("null tool_input kept: %s", in.ToolInput)
	}
}

func TestClaudeCodeFormat(t *testing.T) {
	cc := ClaudeCode{}
	cases := []struct {
		event string
		res   Result
		want  string
	}{
		{"context", Result{AdditionalContext: "<memnode-context>a & b</memnode-context>"}, `{"hookSpecificOutput":{"additionalContext":"<memnode-context>a & b</memnode-context>","hookEventName":"SessionStart"}}`},
		{"context", Result{}, `{"hookSpecificOutput":{"additionalContext":"","hookEventName":"SessionStart"}}`},
		{"file-context", Result{AdditionalContext: "x"}, `{"hookSpecificOutput":{"additionalContext":"x","hookEventName":"PreToolUse","permissionDecision":"allow"}}`},
		{"observation", Result{}, `{"continue":true,"suppressOutput":true}`},
		{"session-init", Result{}, `{"continue":true,"suppressOutput":true}`},
		{"summarize", Result{}, `{"continue":true,"suppressOutput":true}`},
		{"session-end", Result{}, `{"continue":true,"suppressOutput":true}`},
		{"unknown", Result{}, `{"continue":true,"suppressOutput":true}`},
	}
	for _, c := range cases {
		got, err := cc.Format(c.event, c.res)
		if err != nil || string(got) != c.want {
			t.Errorf("Format(%s) = %s, %v; want %s", c.event, got, err, c.want)
		}
	}
}

// FuzzDecodeInput feeds arbitrary stdin to the decode/normalise path: it never panics, the
// Run answer is always one JSON object, and nothing inside <private> survives normalisation.
func FuzzDecodeInput(f *testing.F) {
	for _, c := range fixtureCalls(f) {
		f.Add([]byte(c.Payload), "before ", " after")
	}
	f.Add([]byte(`{"prompt":["x"],"tool_input":{"<private>k</private>":1e400}}`), "<private", "</private>")
	f.Add([]byte(`{"tool_input":{"file_path":"\u003cprivate\u003eSECRET-marker\u003c/private\u003e"}}`), "", "")
	f.Add([]byte(``), "", "")
	f.Add([]byte(`{`), "<", ">")
	f.Fuzz(func(t *testing.T, raw []byte, a, c string) {
		for _, event := range []string{EventSessionInit, EventFileContext, EventObservation} {
			// Raw bytes as they come.
			if _, cleaned, err := cleanInput(raw); err == nil {
				in, err := ClaudeCode{}.Normalize(event, cleaned)
				if err == nil {
					assertNoPrivateTag(t, in)
				}
			}
			// A private secret between fuzzed text, in every field memnode uses.
			secret := a + "<private>SECRET-marker</private>" + c
			payload, _ := json.Marshal(map[string]any{
				"session_id": secret, "cwd": secret, "prompt": secret, "tool_name": secret,
				"tool_input":    map[string]any{"file_path": secret, secret: []any{secret, 1.5}},
				"tool_response": secret, "last_assistant_message": secret, "agent_id": secret,
			})
			_, cleaned, err := cleanInput(payload)
			if err != nil {
				continue // a or c made invalid UTF-8 that json.Marshal replaced: still valid, so rare
			}
			in, err := ClaudeCode{}.Normalize(event, cleaned)
			if err != nil {
				t.Fatalf("normalize a valid payload: %v", err)
			}
			if !strings.Contains(a+c, "SECRET-marker") {
				b, _ := json.Marshal(in)
				if strings.Contains(string(b), "SECRET-marker") || strings.Contains(string(cleaned), "SECRET-marker") {
					t.Fatalf("private content survived: %s", b)
				}
			}
		}
	})
}

// assertNoPrivateTag checks that no string of the input still holds a <private> opening tag
// (an unclosed one hides everything after it, a closed one its content).
func assertNoPrivateTag(t *testing.T, in Input) {
	t.Helper()
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(strings.ToLower(x), "<private>") {
				t.Fatalf("a <private> tag survived: %q", x)
			}
		case map[string]any:
			for k, e := range x {
				walk(k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range [][]byte{b, in.ToolInput, in.ToolResponse} {
		if len(doc) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber() // numbers keep their text, 1e400 included
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decode %s: %v", doc, err)
		}
		walk(v)
	}
}

// TestRunNeverBreaksOnGarbage runs the whole hook on odd inputs: one object, exit 0.
func TestRunNeverBreaksOnGarbage(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	for _, in := range []string{"\x00\xff", `{"prompt":"` + strings.Repeat("<private>", 1000) + `"}`, `{"tool_input":{"file_path":["x"]}}`, `{"cwd":"\u0000"}`} {
		for _, ev := range []string{"context", "session-init", "file-context", "observation", "summarize", "session-end"} {
			r := runHook(t, cfg, ev, in)
			if r.code != 0 {
				t.Fatalf("%s %q: code %d", ev, in, r.code)
			}
		}
	}
}

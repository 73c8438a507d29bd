package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/platformtest"
)

const fixtures = "../../testdata/fixtures/codex"

// memnodeEvent maps the recorded Codex events onto the memnode events the installer
// registers them under ("" for events memnode does not hook).
var memnodeEvent = map[string]string{
	"SessionStart": platform.EventContext, "UserPromptSubmit": platform.EventSessionInit,
	"PostToolUse": platform.EventObservation, "Stop": platform.EventSummarize, "SessionEnd": platform.EventSessionEnd,
}

func TestNormalizeRecordedSession(t *testing.T) {
	calls := platformtest.Session(t, fixtures)
	var tools []string
	for _, c := range calls {
		ev := memnodeEvent[c.Event]
		if ev == "" {
			continue
		}
		in, err := Adapter{}.Normalize(ev, c.Payload)
		if err != nil {
			t.Fatalf("%s: %v", c.Event, err)
		}
		if in.SessionID == "" || in.Cwd != "/home/dev/demo-app" || in.HookEventName != c.Event {
			t.Fatalf("%s: common fields %+v", c.Event, in)
		}
		switch c.Event {
		case "SessionStart":
			if in.Reason != "startup" {
				t.Errorf("SessionStart reason %q", in.Reason)
			}
		case "UserPromptSubmit":
			if in.Prompt == "" {
				t.Error("prompt lost")
			}
		case "Stop":
			if in.LastAssistantMessage == nil || !strings.Contains(*in.LastAssistantMessage, "typo") && !strings.Contains(*in.LastAssistantMessage, "Hello") {
				t.Errorf("Stop last message %v", in.LastAssistantMessage)
			}
		case "PostToolUse":
			if !json.Valid(in.ToolInput) || !json.Valid(in.ToolResponse) {
				t.Fatalf("%s: invalid JSON %s / %s", in.ToolName, in.ToolInput, in.ToolResponse)
			}
			tag := in.ToolName
			if in.Bookkeeping {
				tag += "(bookkeeping)"
			}
			tools = append(tools, tag)
		}
	}
	want := "Bash Bash Edit Bash Bash mcp__memory__recall Bash"
	if got := strings.Join(tools, " "); got != want {
		t.Fatalf("canonical tools %q, want %q", got, want)
	}
}

func TestApplyPatchBecomesAnEdit(t *testing.T) {
	payload := `{"session_id":"s","cwd":"/p","tool_name":"apply_patch","tool_use_id":"c1",
		"tool_input":{"command":"*** Begin Patch\n*** Update File: app.py\n@@\n def greet(name):\n-    return \"Helo, \" + name\n+    return \"Hello, \" + name\n*** End Patch\n"},
		"tool_response":"Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM app.py\n"}`
	in, err := Adapter{}.Normalize(platform.EventObservation, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	var ti struct{ FilePath, OldString, NewString string }
	json.Unmarshal(in.ToolInput, &struct {
		FilePath  *string `json:"file_path"`
		OldString *string `json:"old_string"`
		NewString *string `json:"new_string"`
	}{&ti.FilePath, &ti.OldString, &ti.NewString})
	if in.ToolName != "Edit" || ti.FilePath != "/p/app.py" ||
		ti.OldString != "def greet(name):\n    return \"Helo, \" + name" || ti.NewString != "def greet(name):\n    return \"Hello, \" + name" {
		t.Fatalf("canonical edit %s %+v", in.ToolName, ti)
	}

	add := `*** Begin Patch\n*** Add File: new.py\n+x = 1\n*** End Patch\n`
	name, input, ok := patchCall(strings.ReplaceAll(add, `\n`, "\n"), "/p")
	if !ok || name != "Write" || !strings.Contains(string(input), `"content":"x = 1\n"`) {
		t.Fatalf("add file: %s %s %v", name, input, ok)
	}
	two := "*** Begin Patch\n*** Update File: a\n-x\n+y\n*** Update File: b\n-x\n+y\n*** End Patch\n"
	if _, _, ok := patchCall(two, "/p"); ok {
		t.Fatal("a patch of two files became one edit")
	}
}

func TestShellExitCodeComesFromTheRollout(t *testing.T) {
	dir := t.TempDir()
	rollout := filepath.Join(dir, "rollout.jsonl")
	lines := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_ok","exit_code":0}}}
{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_bad","exit_code":2}}}
`
	if err := os.WriteFile(rollout, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	norm := func(id string) platform.Input {
		t.Helper()
		p := `{"session_id":"s","cwd":"/p","transcript_path":` + jsonQuote(rollout) + `,"tool_name":"Bash","tool_use_id":"` + id + `","tool_input":{"command":"make"},"tool_response":"boom\n"}`
		in, err := Adapter{}.Normalize(platform.EventObservation, []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	var f platform.Failure
	if err := json.Unmarshal(norm("call_bad").ToolResponse, &f); err != nil || !strings.HasPrefix(f.Error, "Exit code 2\nboom") {
		t.Fatalf("failed command: %+v %v", f, err)
	}
	for _, id := range []string{"call_ok", "call_unknown"} {
		if r := string(norm(id).ToolResponse); r != `{"stdout":"boom\n"}` {
			t.Fatalf("%s: %s", id, r)
		}
	}
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestFormatIsWhatCodexValidates(t *testing.T) {
	ad := Adapter{}
	for _, tc := range []struct {
		event, ctx, want string
	}{
		{platform.EventContext, "C", `{"hookSpecificOutput":{"additionalContext":"C","hookEventName":"SessionStart"}}`},
		{platform.EventSessionInit, "<b>", `{"hookSpecificOutput":{"additionalContext":"<b>","hookEventName":"UserPromptSubmit"}}`},
		{platform.EventSessionInit, "", `{}`},
		{platform.EventContext, "", `{}`},
		{platform.EventObservation, "", `{}`},
		{platform.EventFileContext, "ignored", `{}`},
		{platform.EventSummarize, "", `{}`},
	} {
		got, err := ad.Format(tc.event, platform.Result{AdditionalContext: tc.ctx})
		if err != nil || string(got) != tc.want {
			t.Errorf("Format(%s, %q) = %s, %v; want %s", tc.event, tc.ctx, got, err, tc.want)
		}
	}
	if got := ad.MCPTool("search"); got != "mcp__memnode__search" {
		t.Errorf("MCPTool: %s", got)
	}
}

func TestLastAssistantMessageReadsTheRollout(t *testing.T) {
	got, err := Adapter{}.LastAssistantMessage(filepath.Join(fixtures, "transcript-1.jsonl"))
	if err != nil || !strings.Contains(got, "Hello") {
		t.Fatalf("last message %q, %v", got, err)
	}
}

func FuzzPatchCall(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch\n")
	f.Add("*** Begin Patch\n*** Add File: b\n+z\n*** End Patch\n")
	f.Add("*** Delete File: c\n")
	f.Fuzz(func(t *testing.T, patch string) {
		name, input, ok := patchCall(patch, "/p")
		if ok && (name != "Edit" && name != "Write" || !json.Valid(input)) {
			t.Fatalf("patchCall(%q) = %s %s", patch, name, input)
		}
	})
}

// TestCodexReadFiles: the files a shell command line reads, as Codex's model writes them.
func TestCodexReadFiles(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"cat app.py", []string{"app.py"}},
		{"sed -n 1,80p app.py", []string{"app.py"}},
		{"sed -n '1,80p' 'src/app.py' && cat README.md", []string{"src/app.py", "README.md"}},
		{"head -n 20 a.go; tail -5 b.go | grep x", []string{"a.go", "b.go"}},
		{"nl -ba app.py | sed -n 10,20p", []string{"app.py"}},
		{"sed -e 's/a/b/' in.txt", []string{"in.txt"}},
		{"sed -i 's/a/b/' app.py", nil},
		{"LC_ALL=C cat /etc/hosts", []string{"/etc/hosts"}},
		{"python3 test_app.py", nil},
		{"ls -la && git diff", nil},
		{"cat < in.txt", []string{"in.txt"}},
		{"cat a.txt > b.txt 2>/dev/null", []string{"a.txt"}},
	} {
		if got := ReadFiles(tc.cmd); !slices.Equal(got, tc.want) {
			t.Errorf("ReadFiles(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

// TestCodexFileContextHook: the PostToolUse observation of a shell read also asks for its
// files' context, and the answer is PostToolUse's additionalContext (the one Codex output
// that adds context after a tool); other tools ask nothing, and file-context (which an old
// install registered as a second hook) asks nothing either.
func TestCodexFileContextHook(t *testing.T) {
	read := []byte(`{"session_id":"s","cwd":"/w","hook_event_name":"PostToolUse",
		"tool_name":"Bash","tool_input":{"command":"sed -n 1,80p app.py"},"tool_response":"def greet(): ..."}`)
	in, err := Adapter{}.Normalize(platform.EventObservation, read)
	if err != nil || !slices.Equal(in.FilePaths, []string{"app.py"}) || in.Cwd != "/w" || in.ToolName != "Bash" {
		t.Fatalf("%+v, %v", in, err)
	}
	if old, _ := (Adapter{}).Normalize(platform.EventFileContext, read); len(old.FilePaths) != 0 {
		t.Errorf("file-context still asks, beside the observation: %v", old.FilePaths)
	}
	for _, raw := range []string{
		`{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch"}}`,
		`{"tool_name":"Bash","tool_input":{"command":"python3 test_app.py"},"tool_response":"ok"}`,
	} {
		if other, _ := (Adapter{}).Normalize(platform.EventObservation, []byte(raw)); len(other.FilePaths) != 0 {
			t.Errorf("%s asked for file context: %v", raw, other.FilePaths)
		}
	}
	b, err := Adapter{}.Format(platform.EventObservation, platform.Result{AdditionalContext: "<memnode-context>x</memnode-context>"})
	if err != nil || string(b) != `{"hookSpecificOutput":{"additionalContext":"<memnode-context>x</memnode-context>","hookEventName":"PostToolUse"}}` {
		t.Errorf("Format = %s, %v", b, err)
	}
}

// TestCodexFailedCalls: the apply_patch that failed in the recorded session (Codex fired no
// PostToolUse for it) is found in the rollout at Stop, as a failed Edit of app.py; the one
// that succeeded is not.
func TestCodexFailedCalls(t *testing.T) {
	stop := platform.Input{SessionID: "s", Cwd: "/home/dev/demo-app", TranscriptPath: filepath.Join("..", "..", Platform().Fixtures, "transcript-1.jsonl")}
	calls, err := Adapter{}.FailedCalls(stop)
	if err != nil || len(calls) != 1 {
		t.Fatalf("failed calls = %+v, %v", calls, err)
	}
	c := calls[0]
	var ti struct {
		FilePath string `json:"file_path"`
	}
	var f platform.Failure
	if c.ToolName != "Edit" || json.Unmarshal(c.ToolInput, &ti) != nil || ti.FilePath != "/home/dev/demo-app/app.py" ||
		json.Unmarshal(c.ToolResponse, &f) != nil || !strings.HasPrefix(f.Error, "apply_patch verification failed") || c.ToolUseID != "call_0b0bb1901040d5276b35a1b5" {
		t.Errorf("failed call = %+v %s %s", c, c.ToolInput, c.ToolResponse)
	}
	other := stop
	other.TranscriptPath = filepath.Join("..", "..", Platform().Fixtures, "transcript-2.jsonl")
	if calls, err := (Adapter{}).FailedCalls(other); err != nil || len(calls) != 0 {
		t.Errorf("session 2 has no failed call: %+v, %v", calls, err)
	}
}

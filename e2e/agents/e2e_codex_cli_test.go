package agents

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// Codex CLI as the tests run it: the version the fixtures were captured from.
const (
	codexPkg     = "@openai/codex"
	codexVersion = "0.171.0"
)

// responsesToolOutput is the output text of call id in a Responses API request's input.
func responsesToolOutput(t *testing.T, body []byte, id string) string {
	t.Helper()
	var req struct {
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("decode a Responses request: %v", err)
	}
	for _, it := range req.Input {
		if it.CallID != id || !strings.HasSuffix(it.Type, "_output") {
			continue
		}
		var s string
		if json.Unmarshal(it.Output, &s) == nil {
			return s
		}
		return string(it.Output)
	}
	return ""
}

// TestCodexCLI runs the real Codex CLI headless (codex exec) against a scripted Responses
// API server with memnode installed: session 1 reads, fails to read, fails to patch (no hook
// fires for that: the Stop hook records it from the rollout), patches, runs a failing and a
// passing command; session 2 (a new session) gets memnode's context about it, finds
// memnode's MCP tools with tool_search and searches, and its re-read of app.py gets the
// file's history; uninstall restores config.toml.
func TestCodexCLI(t *testing.T) {
	t.Parallel()
	codex := installCLI(t, codexPkg, codexVersion, "codex")
	var next agentcli.Script
	rig := newAgentRig(t, greetingProject(), &agentcli.OpenAIResponses{},
		agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn { return next.Next(r) }))
	next = agentcli.Sequence(
		// Session 1.
		agentcli.Turn{Calls: []agentcli.Call{{Name: "exec_command", Args: map[string]string{"cmd": "cat app.py"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "exec_command", Args: map[string]string{"cmd": "cat NOTES.md"}}}},
		// A patch whose context does not match fails outright: Codex fires no PostToolUse.
		agentcli.Turn{Calls: []agentcli.Call{{Name: "apply_patch", Input: "*** Begin Patch\n*** Update File: app.py\n@@\n-    return \"Hallo, \" + name\n+    return \"Hello, \" + name\n*** End Patch\n"}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "apply_patch", Input: "*** Begin Patch\n*** Update File: app.py\n@@\n-    return \"Helo, \" + name\n+    return \"Hello, \" + name\n*** End Patch\n"}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "exec_command", Args: map[string]string{"cmd": "python3 -c 'import test_greeting'"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "exec_command", Args: map[string]string{"cmd": "python3 test_app.py"}}}},
		agentcli.Turn{Text: "Fixed the greeting typo in app.py; test_app.py passes."},
		// Session 2.
		agentcli.Turn{Calls: []agentcli.Call{{Name: "tool_search", Args: map[string]any{"query": "memnode search memory", "limit": 8}}}},
		agentcli.Turn{Calls: []agentcli.Call{{ID: "call_search", Namespace: "mcp__memnode", Name: "search", Args: map[string]string{"query": "greeting"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "exec_command", Args: map[string]string{"cmd": "sed -n 1,80p app.py"}}}},
		agentcli.Turn{Text: "Last time the greeting typo in app.py was fixed."},
	)
	codexHome := filepath.Join(rig.home, ".codex")
	config := filepath.Join(codexHome, "config.toml")
	// The user's config: the fake provider, no update checks, no sandbox (no bubblewrap here).
	configOrig := []byte(`model = "gpt-5.5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "` + rig.model.URL + `/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"`) // no trailing newline: uninstall must give these bytes back
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, configOrig, 0o600); err != nil {
		t.Fatal(err)
	}
	rig.agentEnv = []string{"FAKE_OPENAI_KEY=sk-test-not-a-key"}
	// memnode install finds codex in PATH for the trust step.
	rig.Extra = append(rig.Extra, "PATH="+filepath.Dir(codex)+string(os.PathListSeparator)+os.Getenv("PATH"))

	rig.Start()
	bin, hookRuns := rig.CountedHooks()
	inst := rig.RunBin(bin, nil, "install", "codex")
	if inst.Code != 0 || !strings.Contains(inst.Stdout, "trusted 5 memnode hooks") {
		t.Fatalf("install did not trust memnode's hooks: exit %d\n%s%s", inst.Code, inst.Stdout, inst.Stderr)
	}
	exec := func(prompt string) {
		t.Helper()
		rig.runAgent(codex, "exec", "--json", prompt)
	}

	exec("The greeting in app.py has a typo. Fix it and run the tests. <private>staging password is SECRET-hunter2</private>")
	s1 := len(rig.turns())
	if s1 != 7 {
		t.Fatalf("session 1 made %d model requests, want 7 (one per scripted turn)", s1)
	}
	testkit.WaitForState(t, "session 1's observations", 30*time.Second, func() (bool, string) {
		all := strings.Join(rig.observationTexts(), "\n")
		return strings.Contains(all, "import test_greeting") && strings.Contains(all, "python3 test_app.py") &&
			strings.Contains(all, "app.py") && strings.Contains(all, "verification failed") && rig.Queued() == 0, all
	})
	obs := rig.observationTexts()
	t.Logf("observations:\n%s", strings.Join(obs, "\n"))
	// One hook process per tool call: the five calls that fire PostToolUse (the failed patch
	// fires none) start five, each recording the call and answering with file context.
	want := map[string]int{"context": 1, "session-init": 1, "observation": 5, "summarize": 1, "session-end": 1}
	if got := hookRunsOf(hookRuns()); !maps.Equal(got, want) {
		t.Errorf("session 1 ran hooks %v, want %v", got, want)
	}
	var failing, patch string
	for _, o := range obs {
		if strings.Contains(o, "import test_greeting") {
			failing = o
		}
		if strings.HasPrefix(o, "Edit ") {
			patch = o
		}
	}
	if !strings.Contains(failing, "failed") {
		t.Errorf("the failing command is recorded without its failure: %s", failing)
	}
	if !strings.Contains(patch, "app.py") {
		t.Errorf("apply_patch is not recorded as an edit of app.py: %q", obs)
	}

	exec("What did we change in this project last time?")
	reqs := rig.turns()
	if len(reqs) != s1+4 {
		t.Fatalf("session 2 made %d model requests, want 4", len(reqs)-s1)
	}
	if !reqs[s1].Contains("# memnode: memory of project") || !reqs[s1].Contains("Hello") {
		t.Errorf("session 2's first request lacks memnode's context about session 1:\n%.3000s", reqs[s1].Body)
	}
	for i := range s1 {
		if reqs[i].Contains("# memnode: memory of project") {
			t.Errorf("session 1's request %d already has memory context: the project was empty", i)
		}
	}
	if !reqs[s1].Contains("mcp__memnode") {
		t.Errorf("session 2's first request does not name memnode's MCP tools")
	}
	if res := responsesToolOutput(t, reqs[s1+2].Body, "call_search"); !strings.Contains(res, "app.py") {
		t.Errorf("memnode's search result did not reach the model: %q", res)
	}
	// The re-read of app.py (with the shell, as Codex reads files) gets memnode's file
	// context through PostToolUse's additionalContext.
	if !reqs[s1+3].Contains("memnode: app.py has") {
		t.Errorf("the re-read of app.py got no file context:\n%.4000s", lastPart(reqs[s1+3].Body, 4000))
	}
	// Session 2's search and re-read fire PostToolUse: two more, one process each.
	want = map[string]int{"context": 2, "session-init": 2, "observation": 7, "summarize": 2, "session-end": 2}
	if got := hookRunsOf(hookRuns()); !maps.Equal(got, want) {
		t.Errorf("sessions 1 and 2 ran hooks %v, want %v", got, want)
	}
	e2ekit.GrepDataDir(t, rig.DataDir, "SECRET-")

	rig.MustRun(nil, "uninstall", "codex")
	assertRestored(t, config, configOrig)
	if _, err := os.Stat(filepath.Join(codexHome, "hooks.json")); !os.IsNotExist(err) {
		t.Errorf("hooks.json left behind: %v", err)
	}
	assertNoBackups(t, rig.home)
}

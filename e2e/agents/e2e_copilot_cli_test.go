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

// Copilot CLI as the tests run it: the version the fixtures were captured from.
const (
	copilotPkg     = "@github/copilot"
	copilotVersion = "1.0.102"
)

// chatToolOutput is the content of the tool message answering call id in a chat
// completions request.
func chatToolOutput(t *testing.T, body []byte, id string) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("decode a chat request: %v", err)
	}
	for _, m := range req.Messages {
		if m.Role != "tool" || m.ToolCallID != id {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s
		}
		return string(m.Content)
	}
	return ""
}

// TestCopilotCLI runs the real GitHub Copilot CLI headless (copilot -p, offline, a custom
// OpenAI-compatible provider) against a scripted chat completions server with memnode
// installed: session 1 views, fails to view, edits, runs a failing and a passing command;
// session 2 gets memnode's context about it and calls memnode's MCP search; uninstall
// restores the config files.
func TestCopilotCLI(t *testing.T) {
	t.Parallel()
	copilot := installCLI(t, copilotPkg, copilotVersion, "copilot")
	var next agentcli.Script
	rig := newAgentRig(t, greetingProject(), &agentcli.OpenAIChat{},
		agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn { return next.Next(r) }))
	app := filepath.Join(rig.project, "app.py")
	next = agentcli.Sequence(
		// Session 1.
		agentcli.Turn{Calls: []agentcli.Call{{Name: "view", Args: map[string]string{"path": app}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "view", Args: map[string]string{"path": filepath.Join(rig.project, "NOTES.md")}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "edit", Args: map[string]string{"path": app, "old_str": `"Helo, "`, "new_str": `"Hello, "`}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "bash", Args: map[string]string{"command": "python3 -c 'import test_greeting'", "description": "Run the greeting test"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "bash", Args: map[string]string{"command": "python3 test_app.py", "description": "Run the tests"}}}},
		agentcli.Turn{Text: "Fixed the greeting typo in app.py; test_app.py passes."},
		// Session 2.
		agentcli.Turn{Calls: []agentcli.Call{{ID: "call_search", Name: "memnode-search", Args: map[string]string{"query": "greeting"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{ID: "call_view", Name: "view", Args: map[string]string{"path": app}}}},
		agentcli.Turn{Calls: []agentcli.Call{{ID: "call_sed", Name: "bash", Args: map[string]string{"command": "sed -n 1,80p app.py", "description": "Read app.py"}}}},
		agentcli.Turn{Text: "Last time the greeting typo in app.py was fixed."},
	)
	copilotHome := filepath.Join(rig.home, ".copilot")
	settings := filepath.Join(copilotHome, "settings.json")
	settingsOrig := []byte("{\n  \"theme\": \"dark\",\n  \"banner\": \"never\"\n}")
	if err := os.MkdirAll(copilotHome, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, settingsOrig, 0o600); err != nil {
		t.Fatal(err)
	}
	rig.agentEnv = []string{
		"COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false", "COPILOT_MODEL=gpt-4.1",
		"COPILOT_PROVIDER_BASE_URL=" + rig.model.URL + "/v1", "COPILOT_PROVIDER_API_KEY=sk-test-not-a-key",
	}

	rig.Start()
	bin, hookRuns := rig.CountedHooks()
	if r := rig.RunBin(bin, nil, "install", "copilot"); r.Code != 0 {
		t.Fatalf("install copilot: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	run := func(prompt string) {
		t.Helper()
		rig.runAgent(copilot, "-p", prompt, "--allow-all")
	}

	run("The greeting in app.py has a typo. Fix it and run the tests. <private>staging password is SECRET-hunter2</private>")
	s1 := len(rig.turns())
	testkit.WaitForState(t, "session 1's observations", 30*time.Second, func() (bool, string) {
		all := strings.Join(rig.observationTexts(), "\n")
		return strings.Contains(all, "import test_greeting") && strings.Contains(all, "python3 test_app.py") &&
			strings.Contains(all, "NOTES.md") && rig.Queued() == 0, all
	})
	obs := rig.observationTexts()
	t.Logf("session 1: %d model requests; observations:\n%s", s1, strings.Join(obs, "\n"))
	// One hook process per tool call: five calls (the failed view fires postToolUseFailure),
	// five observation hooks, each recording the call and answering with file context.
	want := map[string]int{"context": 1, "session-init": 1, "observation": 5, "summarize": 1, "session-end": 1}
	if got := hookRunsOf(hookRuns()); !maps.Equal(got, want) {
		t.Errorf("session 1 ran hooks %v, want %v", got, want)
	}
	var failing, missing, edit string
	for _, o := range obs {
		switch {
		case strings.Contains(o, "import test_greeting"):
			failing = o
		case strings.Contains(o, "NOTES.md"):
			missing = o
		case strings.HasPrefix(o, "Edit "):
			edit = o
		}
	}
	if !strings.Contains(failing, "failed") {
		t.Errorf("the failing command is recorded without its failure: %s", failing)
	}
	if !strings.Contains(missing, "Path does not exist") {
		t.Errorf("the failed view (postToolUseFailure) is recorded without its failure: %s", missing)
	}
	if !strings.Contains(edit, "app.py") {
		t.Errorf("the edit of app.py is not recorded as an Edit: %q", obs)
	}

	run("What did we change in this project last time?")
	reqs := rig.turns()
	var first agentcli.Request
	for _, r := range reqs[s1:] {
		if len(r.Tools) > 0 {
			first = r
			break
		}
	}
	if !first.Contains("# memnode: memory of project") {
		t.Errorf("session 2's first request lacks memnode's context about session 1:\n%.3000s", first.Body)
	}
	for i := range s1 {
		if reqs[i].Contains("# memnode: memory of project") {
			t.Errorf("session 1's request %d already has memory context: the project was empty", i)
		}
	}
	if !first.HasTool("memnode-search") {
		t.Errorf("memnode's MCP tools are not offered to the model: %v", first.Tools)
	}
	var answered bool
	for _, r := range reqs[s1:] {
		if res := chatToolOutput(t, r.Body, "call_search"); res != "" {
			answered = true
			if !strings.Contains(res, "app.py") {
				t.Errorf("memnode's search result lacks session 1's memory: %q", res)
			}
		}
	}
	if !answered {
		t.Error("no request carried memnode's search result back to the model")
	}
	// The re-read of app.py with view gets memnode's file context (postToolUse's
	// additionalContext); reading it again with bash (`sed -n`, as Codex's shell reads) in
	// the same session does not repeat it: a file's history comes once per session.
	reread := func(id string, contexts int) {
		t.Helper()
		for _, r := range reqs[s1:] {
			if chatToolOutput(t, r.Body, id) == "" || (id == "call_view" && chatToolOutput(t, r.Body, "call_sed") != "") {
				continue
			}
			if n := strings.Count(requestText(r), "memnode: app.py has"); n != contexts {
				t.Errorf("after the re-read %s the request has %d file contexts of app.py, want %d:\n%.4000s", id, n, contexts, lastPart(r.Body, 4000))
			}
			return
		}
		t.Errorf("no request carried the re-read %s back to the model", id)
	}
	reread("call_view", 1)
	reread("call_sed", 1)
	// Session 2's search and two re-reads: three more, one process each.
	want = map[string]int{"context": 2, "session-init": 2, "observation": 8, "summarize": 2, "session-end": 2}
	if got := hookRunsOf(hookRuns()); !maps.Equal(got, want) {
		t.Errorf("sessions 1 and 2 ran hooks %v, want %v", got, want)
	}
	e2ekit.GrepDataDir(t, rig.DataDir, "SECRET-")

	rig.MustRun(nil, "uninstall", "copilot")
	assertRestored(t, settings, settingsOrig)
	if b, err := os.ReadFile(filepath.Join(copilotHome, "mcp-config.json")); err == nil && strings.Contains(string(b), "memnode") {
		t.Errorf("mcp-config.json keeps memnode:\n%s", b)
	}
	assertNoBackups(t, rig.home)
}

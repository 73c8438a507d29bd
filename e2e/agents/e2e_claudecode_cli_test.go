package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// Claude Code as the tests run it: the version issue 16 names.
const (
	claudePkg     = "@anthropic-ai/claude-code"
	claudeVersion = "2.1.332"
)

// greetingProject is the temp project the real-CLI tests work in: app.py has a typo that
// session 1 fixes. app.py is over the file-context size gate (hooks: 1,500 bytes), so a
// re-read gets memnode's history of it.
func greetingProject() map[string]string {
	pad := strings.Repeat("# Greeting helpers for the demo app; kept long on purpose.\n", 30)
	return map[string]string{
		"app.py":      pad + "def greet(name):\n    return \"Helo, \" + name\n",
		"test_app.py": "import app\nassert app.greet(\"Ada\") == \"Hello, Ada\"\nprint(\"ok\")\n",
		"README.md":   "# demo app\n",
	}
}

// anthropicToolResult is the text of the tool_result for call id in a Messages request.
func anthropicToolResult(t *testing.T, body []byte, id string) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("decode a Messages request: %v", err)
	}
	for _, m := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			continue // a plain string message
		}
		for _, b := range blocks {
			if b.Type != "tool_result" || b.ToolUseID != id {
				continue
			}
			var s string
			if json.Unmarshal(b.Content, &s) == nil {
				return s
			}
			var parts []struct{ Text string }
			json.Unmarshal(b.Content, &parts)
			var texts []string
			for _, p := range parts {
				texts = append(texts, p.Text)
			}
			return strings.Join(texts, "\n")
		}
	}
	return ""
}

// TestClaudeCodeCLI runs the real Claude Code CLI headless against a scripted Anthropic
// server with memnode installed, in two sessions of one project: session 1 reads, tries a
// file outside the workspace, edits, runs a failing and a passing command; session 2
// resumes it (-c), loads memnode's MCP tools through ToolSearch, searches, and re-reads
// app.py. It covers issue 16's Claude Code fixes against the real CLI.
func TestClaudeCodeCLI(t *testing.T) {
	t.Parallel()
	claude := installCLI(t, claudePkg, claudeVersion, "claude")
	var next agentcli.Script
	// The turns name the project's paths, known once the rig exists: the server asks next.
	rig := newAgentRig(t, greetingProject(), &agentcli.AnthropicMessages{},
		agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn { return next.Next(r) }))
	app := filepath.Join(rig.project, "app.py")
	secretKey := filepath.Join(rig.home, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(secretKey), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretKey, []byte("SECRET-ssh-private-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	next = agentcli.Sequence(
		// Session 1.
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Read", Args: map[string]string{"file_path": app}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Read", Args: map[string]string{"file_path": secretKey}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Edit", Args: map[string]string{"file_path": app, "old_string": `"Helo, "`, "new_string": `"Hello, "`}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Bash", Args: map[string]string{"command": "python3 -c 'import test_greeting'", "description": "run the greeting test"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Bash", Args: map[string]string{"command": "python3 test_app.py", "description": "run the tests"}}}},
		agentcli.Turn{Text: "Fixed the greeting typo in app.py; test_app.py passes."},
		// Session 2 (claude -c).
		agentcli.Turn{Calls: []agentcli.Call{{Name: "ToolSearch", Args: map[string]any{"query": "select:mcp__memnode__search", "max_results": 5}}}},
		agentcli.Turn{Calls: []agentcli.Call{{ID: "toolu_search", Name: "mcp__memnode__search", Args: map[string]string{"query": "greeting"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Read", Args: map[string]string{"file_path": app}}}},
		agentcli.Turn{Text: "Last time the greeting typo in app.py was fixed."},
	)
	rig.agentEnv = []string{
		"ANTHROPIC_BASE_URL=" + rig.model.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}

	// The user's own files, formatted their way: install + uninstall gives back these bytes.
	settings := filepath.Join(rig.home, ".claude", "settings.json")
	userJSON := filepath.Join(rig.home, ".claude.json")
	settingsOrig := []byte("{\n    \"theme\": \"dark\",\n    \"env\": {\"FOO\": \"bar\"}\n}\n")
	userOrig := []byte(`{"hasCompletedOnboarding": true, "numStartups": 1}`)
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string][]byte{settings: settingsOrig, userJSON: userOrig} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rig.MustRun(nil, "install", "claude-code")
	rig.MustRun(nil, "uninstall", "claude-code")
	for p, want := range map[string][]byte{settings: settingsOrig, userJSON: userOrig} {
		assertRestored(t, p, want)
	}
	assertNoBackups(t, rig.home)

	rig.Start()
	rig.MustRun(nil, "install", "claude-code")
	claudeArgs := []string{"--output-format", "json", "--allowedTools", "Bash Edit mcp__memnode", "--model", "claude-sonnet-4-5"}

	// Session 1.
	out1 := rig.runAgent(claude, append([]string{"-p", "The greeting in app.py has a typo. Fix it and run the tests. <private>staging password is SECRET-hunter2</private>"}, claudeArgs...)...)
	var res1 struct {
		SessionID         string `json:"session_id"`
		PermissionDenials []struct {
			ToolName  string          `json:"tool_name"`
			ToolInput json.RawMessage `json:"tool_input"`
		} `json:"permission_denials"`
	}
	if err := json.Unmarshal([]byte(out1.Stdout), &res1); err != nil {
		t.Fatalf("session 1 result: %v\n%s", err, out1.Stdout)
	}
	s1 := len(rig.turns())
	if s1 != 6 {
		t.Fatalf("session 1 made %d model requests, want 6 (one per scripted turn)", s1)
	}

	// A Read outside the workspace is still refused with memnode's PreToolUse(Read) hook.
	denied := false
	for _, d := range res1.PermissionDenials {
		denied = denied || d.ToolName == "Read" && strings.Contains(string(d.ToolInput), secretKey)
	}
	if !denied {
		t.Errorf("the Read of %s was not refused: permission_denials %+v", secretKey, res1.PermissionDenials)
	}
	for i, r := range rig.model.Requests() {
		if r.Contains("SECRET-ssh-private-key") {
			t.Errorf("model request %d holds the key file's content", i)
		}
	}

	// memnode recorded the session: the read, the edit, the failing and the passing command.
	testkit.WaitForState(t, "session 1's observations", 30*time.Second, func() (bool, string) {
		obs := rig.observationTexts()
		all := strings.Join(obs, "\n")
		return len(obs) >= 4 && strings.Contains(all, "import test_greeting") && strings.Contains(all, "python3 test_app.py") &&
			rig.Queued() == 0, all
	})
	var failing string
	for _, o := range rig.observationTexts() {
		if strings.Contains(o, "import test_greeting") {
			failing = o
		}
	}
	if !strings.Contains(failing, "failed") {
		t.Errorf("the failing command (PostToolUseFailure) is recorded without its failure: %s", failing)
	}

	// Session 2 resumes session 1: SessionStart(resume) brings memnode's context.
	rig.runAgent(claude, append([]string{"-c", "-p", "What did we change in this project last time?"}, claudeArgs...)...)
	reqs := rig.turns()
	if len(reqs) != s1+4 {
		t.Fatalf("session 2 made %d model requests, want 4", len(reqs)-s1)
	}
	if !reqs[s1].Contains("# memnode: memory of project") {
		t.Errorf("the resumed session's first request lacks memnode's context:\n%.3000s", reqs[s1].Body)
	}
	for i := range s1 {
		if reqs[i].Contains("# memnode: memory of project") {
			t.Errorf("session 1's request %d already has memory context: the project was empty", i)
		}
	}
	// memnode's MCP tools reach the model: deferred, named in the first request, loaded by
	// ToolSearch, and the search call answers from memory.
	if !reqs[s1].Contains("mcp__memnode__search") {
		t.Errorf("the first request of session 2 does not name mcp__memnode__search")
	}
	if res := anthropicToolResult(t, reqs[s1+2].Body, "toolu_search"); !strings.Contains(res, "Edit app.py") {
		t.Errorf("the mcp__memnode__search result that reached the model lacks session 1's memory: %q", res)
	}
	// The re-read of app.py gets memnode's file context.
	if !reqs[s1+3].Contains("memnode: app.py has") {
		t.Errorf("the re-read of app.py got no file context:\n%.4000s", lastPart(reqs[s1+3].Body, 4000))
	}

	// No planted secret reached memnode's data dir.
	e2ekit.GrepDataDir(t, rig.DataDir, "SECRET-")

	// Uninstall after real sessions removes exactly memnode's entries.
	rig.MustRun(nil, "uninstall", "claude-code")
	assertRestored(t, settings, settingsOrig)
	if got := e2ekit.ReadFile(t, userJSON); strings.Contains(string(got), "memnode") {
		t.Errorf("~/.claude.json keeps memnode after uninstall:\n%s", got)
	}
	assertNoBackups(t, rig.home)
}

// lastPart is the last n bytes of b, where hook output lands in a request.
func lastPart(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// assertNoBackups fails when an installer left backup files below dir.
func assertNoBackups(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "memnode-backup") {
			t.Errorf("backup left behind: %s", p)
		}
		return nil
	})
}

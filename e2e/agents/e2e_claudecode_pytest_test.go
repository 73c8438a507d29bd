package agents

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// TestClaudeCodeCLIRemembersFailingPytest is issue 24's done-when on the real CLI: a Claude
// Code session runs `pytest -q` on a test that fails (real pytest, through Claude Code's
// Bash tool and its PostToolUseFailure hook), and the next session's context remembers the
// run as failing — never as passing.
func TestClaudeCodeCLIRemembersFailingPytest(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pytest"); err != nil {
		agentcli.Need(t, "pytest is not installed (Debian: apt-get install python3-pytest)")
	}
	claude := installCLI(t, claudePkg, claudeVersion, "claude")
	files := map[string]string{
		"app.py":      "def greet(name):\n    return \"Helo, \" + name\n",
		"test_app.py": "import app\n\n\ndef test_greet():\n    assert app.greet(\"Ada\") == \"Hello, Ada\"\n\n\ndef test_name_kept():\n    assert \"Ada\" in app.greet(\"Ada\")\n",
	}
	rig := newAgentRig(t, files, &agentcli.AnthropicMessages{}, agentcli.Sequence(
		// Session 1: run the tests; one of the two fails.
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Bash", Args: map[string]string{"command": "pytest -q"}}}},
		agentcli.Turn{Text: "One test fails: test_greet."},
		// Session 2: a new session in the same project.
		agentcli.Turn{Text: "Last time test_greet failed."},
	))
	rig.agentEnv = []string{
		"ANTHROPIC_BASE_URL=" + rig.model.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	rig.Start()
	rig.MustRun(nil, "install", "claude-code")
	args := []string{"--output-format", "json", "--allowedTools", "Bash", "--model", "claude-sonnet-4-5"}

	rig.runAgent(claude, append([]string{"-p", "Run the tests."}, args...)...)
	s1 := len(rig.turns())
	if s1 != 2 {
		t.Fatalf("session 1 made %d model requests, want 2", s1)
	}
	// What the model saw is real pytest's verdict: the hook saw the same run.
	if res := rig.turns()[1]; !res.Contains("1 failed, 1 passed") {
		t.Fatalf("pytest's result did not reach the model:\n%.3000s", lastPart(res.Body, 3000))
	}
	var run string
	testkit.WaitForState(t, "the pytest run's observation", 30*time.Second, func() (bool, string) {
		obs := rig.observationTexts()
		for _, o := range obs {
			if strings.Contains(o, "pytest -q") {
				run = o
			}
		}
		return run != "" && rig.Queued() == 0, strings.Join(obs, "\n")
	})
	if !strings.Contains(run, "Tests fail: pytest -q") || passWord(strings.ReplaceAll(run, "1 failed, 1 passed", "")) {
		t.Errorf("the failing pytest run is recorded as %q, want 'Tests fail: pytest -q' and no pass", run)
	}

	rig.runAgent(claude, append([]string{"-p", "What happened last time?"}, args...)...)
	reqs := rig.turns()
	if len(reqs) != s1+1 {
		t.Fatalf("session 2 made %d model requests, want 1", len(reqs)-s1)
	}
	ctx := string(reqs[s1].Body)
	if !strings.Contains(ctx, "# memnode: memory of project") || !strings.Contains(ctx, "Tests fail: pytest -q") {
		t.Fatalf("session 2's context does not remember the failing run:\n%.4000s", lastPart(reqs[s1].Body, 4000))
	}
	if strings.Contains(ctx, "Tests pass") || strings.Contains(ctx, "all passed") {
		t.Errorf("session 2's context says the tests passed:\n%.4000s", lastPart(reqs[s1].Body, 4000))
	}
}

// passWord reports whether s says something passed, as a word.
func passWord(s string) bool {
	low := strings.ToLower(s)
	for _, w := range strings.FieldsFunc(low, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') }) {
		if w == "pass" || w == "passed" || w == "passes" || w == "passing" {
			return true
		}
	}
	return false
}

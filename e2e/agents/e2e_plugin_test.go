package agents

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// TestClaudeCodePlugin installs memnode into the pinned Claude Code CLI as a plugin from the
// repository's own marketplace (.claude-plugin/marketplace.json → plugin/), with no `memnode
// install`: `claude plugin validate` passes, a session is recorded through the plugin's hooks
// and the next one gets memnode's context; with `memnode install claude-code` as well, a tool
// call is recorded once, not twice; `claude plugin uninstall` leaves no memnode hook behind.
func TestClaudeCodePlugin(t *testing.T) {
	t.Parallel()
	claude := installCLI(t, claudePkg, claudeVersion, "claude")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var next agentcli.Script
	rig := newAgentRig(t, greetingProject(), &agentcli.AnthropicMessages{},
		agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn { return next.Next(r) }))
	app := filepath.Join(rig.project, "app.py")
	bash := func(cmd string) agentcli.Turn {
		return agentcli.Turn{Calls: []agentcli.Call{{Name: "Bash", Args: map[string]string{"command": cmd, "description": "run " + cmd}}}}
	}
	next = agentcli.Sequence(
		// Session 1: through the plugin's hooks.
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Read", Args: map[string]string{"file_path": app}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Edit", Args: map[string]string{"file_path": app, "old_string": `"Helo, "`, "new_string": `"Hello, "`}}}},
		bash("python3 test_app.py"),
		agentcli.Turn{Text: "Fixed the greeting typo in app.py; test_app.py passes."},
		// Session 2 (-c): the context arrives.
		agentcli.Turn{Text: "Last time the greeting typo in app.py was fixed."},
		// Session 3: plugin and `memnode install` both active.
		bash("grep -c plugin-and-install-once README.md || true"),
		agentcli.Turn{Text: "Done."},
		// Session 4: after uninstalling both.
		bash("grep -c after-plugin-uninstall README.md || true"),
		agentcli.Turn{Text: "Done."},
	)
	rig.agentEnv = []string{
		"ANTHROPIC_BASE_URL=" + rig.model.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	// The plugin's hook.sh finds memnode-hook first in PATH: a wrapper that logs each run.
	counted, hookRuns := rig.CountedHooks()
	rig.path = filepath.Dir(counted) + string(os.PathListSeparator) + os.Getenv("PATH")
	observations := func() int {
		n := 0
		for _, r := range hookRuns() {
			if r == "hook_claude-code_observation" {
				n++
			}
		}
		return n
	}
	plugin := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(claude, append([]string{"plugin"}, args...)...)
		cmd.Dir = rig.project
		cmd.Env = rig.env()
		o := runCLI(t, 2*time.Minute, cmd)
		if o.Code != 0 {
			t.Fatalf("claude plugin %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), o.Code, o.Stdout, o.Stderr)
		}
		return o.Stdout + o.Stderr
	}
	plugin("validate", filepath.Join(repo, "plugin"))
	plugin("validate", repo)
	plugin("marketplace", "add", repo)
	plugin("install", "memnode@memnode")
	settings := filepath.Join(rig.home, ".claude", "settings.json")
	if b, _ := os.ReadFile(settings); strings.Contains(string(b), "hook claude-code") {
		t.Fatalf("the plugin install wrote memnode install's hooks into settings.json:\n%s", b)
	}

	claudeArgs := []string{"--output-format", "json", "--allowedTools", "Bash Edit mcp__memnode", "--model", "claude-sonnet-4-5"}
	rig.runAgent(claude, append([]string{"-p", "The greeting in app.py has a typo. Fix it and run the tests."}, claudeArgs...)...)
	s1 := len(rig.turns())
	testkit.WaitForState(t, "session 1's tool calls as observations (plugin hooks)", 60*time.Second, func() (bool, string) {
		obs := rig.observationTexts()
		all := strings.Join(obs, "\n")
		return len(obs) >= 3 && strings.Contains(all, "python3 test_app.py") && rig.Queued() == 0, all
	})
	rig.runAgent(claude, append([]string{"-c", "-p", "What did we change in this project last time?"}, claudeArgs...)...)
	if reqs := rig.turns(); len(reqs) <= s1 || !reqs[s1].Contains("# memnode: memory of project") || !reqs[s1].Contains("app.py") {
		t.Fatalf("the next session's first request lacks memnode's context from the plugin's hooks")
	}

	// Both ways installed (memnode install writes the same counting memnode-hook into
	// settings.json): the plugin's hooks step aside, the one call runs one observation hook.
	if r := rig.RunBin(counted, nil, "install", "claude-code"); r.Code != 0 {
		t.Fatalf("memnode install claude-code: exit %d: %s", r.Code, r.Stderr)
	}
	runsBefore := observations()
	rig.runAgent(claude, append([]string{"-p", "Say it once."}, claudeArgs...)...)
	if n := observations() - runsBefore; n != 1 {
		t.Errorf("with the plugin and memnode install both active, one tool call ran %d observation hooks, want 1", n)
	}
	count := func(word string) int {
		n := 0
		for _, o := range rig.observationTexts() {
			if strings.Contains(o, word) {
				n++
			}
		}
		return n
	}
	testkit.WaitFor(t, "the once-call to be recorded", 60*time.Second, func() bool {
		return count("plugin-and-install-once") >= 1 && rig.Queued() == 0
	})
	if n := count("plugin-and-install-once"); n != 1 {
		t.Errorf("with the plugin and memnode install both active the call was recorded %d times, want 1", n)
	}

	// Uninstalled both ways: no hook of memnode's is left to run. (Claude Code keeps the
	// plugin's files in plugins/cache and the marketplace's copy; neither is active.)
	plugin("uninstall", "memnode@memnode")
	rig.MustRun(nil, "uninstall", "claude-code")
	runsBefore = len(hookRuns())
	filepath.WalkDir(filepath.Join(rig.home, ".claude"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && (d.Name() == "cache" || d.Name() == "marketplaces") {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), "scripts/hook.sh") || strings.Contains(string(b), "hook claude-code") ||
			strings.Contains(string(b), `"memnode@memnode": true`) {
			t.Errorf("%s still names a memnode hook after uninstall:\n%s", p, b)
		}
		return nil
	})
	before := len(rig.observationTexts())
	rig.runAgent(claude, append([]string{"-p", "One more."}, claudeArgs...)...)
	rig.MustRun(nil, "stop") // drains the queue: whatever was sent is committed
	if got := len(rig.observationTexts()); got != before || count("after-plugin-uninstall") != 0 || len(hookRuns()) != runsBefore {
		t.Errorf("a session after uninstall was recorded (%d observations, %d before; %d hook runs)", got, before, len(hookRuns())-runsBefore)
	}
}

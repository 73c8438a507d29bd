package agents

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/agentcli"
)

// qwenCodeVersion is the pinned @qwen-code/qwen-code the fixtures were captured from.
const qwenCodeVersion = "0.24.4"

// TestRealQwenCode runs the real Qwen Code from npm, headless, against a fake
// OpenAI-compatible provider on 127.0.0.1, with memnode installed: session 1 is recorded (its
// failing command too) with one prompt although UserPromptSubmit fires before every model
// request, session 2 gets memnode's context and its MCP search result and its re-read of
// app.js the file's history from the one hook process of that call, the private secret
// never reaches the data dir, and uninstall restores settings.json byte for byte.
func TestRealQwenCode(t *testing.T) {
	t.Parallel()
	qwen := installCLI(t, "@qwen-code/qwen-code", qwenCodeVersion, "qwen")
	in := e2ekit.NewInstance(t)
	home := agentcli.NewHome(t)
	in.Extra = []string{"HOME=" + home}
	proj := agentProject(t)
	app := filepath.Join(proj, e2ekit.AgentFile)

	settings := filepath.Join(home, ".qwen", "settings.json")
	// In the user's own layout and without Qwen's "$version": Qwen Code migrates and re-writes
	// the file on its first start, and uninstall still gives back these bytes (Qwen's own
	// key and layout are all that changed).
	orig := []byte(`{
  "security": {"auth": {"selectedType": "openai"}},
  "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}
`)
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	in.Start()
	bin, hookRuns := in.CountedHooks()
	if r := in.RunBin(bin, nil, "install", "qwen-code"); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Cleanup(func() { in.Run(nil, "stop") })

	run := func(srv *agentcli.Server, prompt string) {
		t.Helper()
		cmd := exec.Command(qwen, "-p", prompt, "--approval-mode", "yolo", "-o", "json")
		cmd.Dir = proj
		cmd.Env = in.AgentEnv(home, "OPENAI_API_KEY=fake-openai-key", "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_MODEL=local-model")
		out := runCLI(t, 90*time.Second, cmd)
		if out.Code != 0 {
			t.Fatalf("qwen exited %d\nstdout: %s\nstderr: %s", out.Code, out.Stdout, out.Stderr)
		}
	}

	s1 := agentcli.NewServer(t, &agentcli.OpenAIChat{}, agentcli.Sequence(
		agentcli.Turn{Text: "Let me look at the code.", Calls: []agentcli.Call{{Name: "read_file", Args: map[string]any{"file_path": app}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "edit", Args: map[string]any{"file_path": app, "old_string": e2ekit.AgentOld, "new_string": e2ekit.AgentNew}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "run_shell_command", Args: map[string]any{"command": e2ekit.AgentFailCmd, "description": "Run the greeting tests"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "run_shell_command", Args: map[string]any{"command": e2ekit.AgentPassCmd, "description": "Run the tests"}}}},
		agentcli.Turn{Text: e2ekit.AgentAnswer1},
	))
	run(s1, agentPrompt1)
	if b, _ := os.ReadFile(app); !strings.Contains(string(b), e2ekit.AgentNew) {
		t.Fatalf("session 1 did not really edit %s:\n%s", e2ekit.AgentFile, b)
	}
	titles := in.RecordedSession1(t, filepath.Base(proj))
	// One hook process per tool call: the four calls start four observation hooks
	// (PostToolUse, or PostToolUseFailure for the failing command), and the first read (of a
	// file memnode knew nothing about) got no file context.
	assertOneHookPerCall(t, hookRuns, 4)
	assertNoFileContext(t, s1.ModelRequests())
	db := in.Db()
	if n := in.Count(db, "SELECT COUNT(*) FROM prompts WHERE project = ?", filepath.Base(proj)); n != 1 {
		t.Errorf("session 1 has %d prompts, want 1 (UserPromptSubmit repeats before each model request)", n)
	}

	s2 := agentcli.NewServer(t, &agentcli.OpenAIChat{}, agentcli.Sequence(
		agentcli.Turn{Calls: []agentcli.Call{{Name: "tool_search", Args: map[string]any{"query": "select:mcp__memnode__search"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "tool_call", Args: map[string]any{"name": "mcp__memnode__search", "arguments": map[string]any{"query": "greeting"}}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "read_file", Args: map[string]any{"file_path": app}}}},
		agentcli.Turn{Text: e2ekit.AgentAnswer2},
	))
	run(s2, agentPrompt2)
	reqs := s2.ModelRequests()
	if len(reqs) < 4 {
		t.Fatalf("session 2: %d model requests", len(reqs))
	}
	first := requestText(reqs[0])
	assertSessionContext(t, first, "mcp__memnode__search", titles)
	last := requestText(reqs[len(reqs)-1])
	if strings.Count(last, "Edit "+e2ekit.AgentFile) <= strings.Count(first, "Edit "+e2ekit.AgentFile) {
		t.Errorf("memnode's search result did not reach the model:\n%.4000s", last)
	}
	// The re-read of app.js gets memnode's file context, appended to the tool's result by
	// the PostToolUse hook that records it: one process each for tool_search, the search and
	// the read.
	if fileContexts(reqs[len(reqs)-2]) != 0 || fileContexts(reqs[len(reqs)-1]) == 0 {
		t.Errorf("the re-read of %s got no file context:\n%.4000s", e2ekit.AgentFile, lastPart([]byte(last), 4000))
	}
	assertOneHookPerCall(t, hookRuns, 7)
	e2ekit.GrepDataDir(t, in.DataDir, plantedSecret)

	if b, err := os.ReadFile(settings); err != nil || !strings.Contains(string(b), `"$version"`) {
		t.Fatalf("Qwen Code did not migrate settings.json (the case uninstall must still restore): %s %v", b, err)
	}
	in.MustRun(nil, "uninstall", "qwen-code")
	assertRestored(t, settings, orig)
}

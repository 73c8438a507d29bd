package agents

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/agentcli"
)

// geminiCLIVersion is the pinned @google/gemini-cli the fixtures were captured from.
const geminiCLIVersion = "0.61.0"

// TestRealGeminiCLI runs the real Gemini CLI from npm, headless, against a fake Gemini API
// on 127.0.0.1, with memnode installed: session 1 is recorded (a failing command too), session
// 2's first model request carries memnode's context about it, memnode's MCP search reaches
// the model, its re-read of app.js gets the file's history from the one hook process of
// that call, the private secret never reaches the data dir, and uninstall restores
// settings.json byte for byte.
func TestRealGeminiCLI(t *testing.T) {
	t.Parallel()
	gemini := installCLI(t, "@google/gemini-cli", geminiCLIVersion, "gemini")
	in := e2ekit.NewInstance(t)
	home := agentcli.NewHome(t)
	in.Extra = []string{"HOME=" + home}
	proj := agentProject(t)
	app := filepath.Join(proj, e2ekit.AgentFile)

	settings := filepath.Join(home, ".gemini", "settings.json")
	orig := []byte(`{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
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
	if r := in.RunBin(bin, nil, "install", "gemini-cli"); r.Code != 0 {
		t.Fatalf("install: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	t.Cleanup(func() { in.Run(nil, "stop") })

	run := func(srv *agentcli.Server, prompt string) agentcli.Output {
		t.Helper()
		cmd := exec.Command(gemini, "-p", prompt, "--approval-mode", "yolo", "-o", "json", "-m", "gemini-2.5-flash")
		cmd.Dir = proj
		cmd.Env = in.AgentEnv(home, "GEMINI_API_KEY=fake-gemini-key", "GOOGLE_GEMINI_BASE_URL="+srv.URL,
			"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_TELEMETRY_ENABLED=false", "GEMINI_CLI_TRUST_WORKSPACE=true")
		out := runCLI(t, 90*time.Second, cmd)
		if out.Code != 0 {
			t.Fatalf("gemini exited %d\nstdout: %s\nstderr: %s", out.Code, out.Stdout, out.Stderr)
		}
		return out
	}

	s1 := agentcli.NewServer(t, agentcli.GeminiAPI{}, agentcli.Sequence(
		agentcli.Turn{Text: "Let me look at the code.", Calls: []agentcli.Call{{Name: "read_file", Args: map[string]any{"file_path": app}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "replace", Args: map[string]any{"file_path": app, "old_string": e2ekit.AgentOld, "new_string": e2ekit.AgentNew, "instruction": "Fix the typo in the greeting."}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "run_shell_command", Args: map[string]any{"command": e2ekit.AgentFailCmd, "description": "Run the greeting tests"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "run_shell_command", Args: map[string]any{"command": e2ekit.AgentPassCmd, "description": "Run the tests"}}}},
		agentcli.Turn{Text: e2ekit.AgentAnswer1},
	))
	run(s1, agentPrompt1)
	if b, _ := os.ReadFile(app); !strings.Contains(string(b), e2ekit.AgentNew) {
		t.Fatalf("session 1 did not really edit %s:\n%s", e2ekit.AgentFile, b)
	}
	titles := in.RecordedSession1(t, filepath.Base(proj))
	// One hook process per tool call: the four calls' AfterTool starts four observation
	// hooks, and the first read (of a file memnode knew nothing about) got no file context.
	assertOneHookPerCall(t, hookRuns, 4)
	assertNoFileContext(t, s1.ModelRequests())

	s2 := agentcli.NewServer(t, agentcli.GeminiAPI{}, agentcli.Sequence(
		agentcli.Turn{Calls: []agentcli.Call{{Name: "mcp_memnode_search", Args: map[string]any{"query": "greeting"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "read_file", Args: map[string]any{"file_path": app}}}},
		agentcli.Turn{Text: e2ekit.AgentAnswer2},
	))
	out2 := run(s2, agentPrompt2)
	// The session start's line for the user: headless Gemini CLI writes a SessionStart
	// hook's systemMessage to stderr, never to the model.
	if !regexp.MustCompile(`(?m)^memnode: [0-9]+ memor(y|ies) from [0-9]+ sessions? · viewer: `).MatchString(out2.Stderr) {
		t.Errorf("session 2: Gemini CLI did not show memnode's line to the user; stderr:\n%s", out2.Stderr)
	}
	reqs := s2.ModelRequests()
	if len(reqs) < 3 || !reqs[0].HasTool("mcp_memnode_search") {
		t.Fatalf("session 2: %d model requests; memnode's MCP tools offered: %v", len(reqs), len(reqs) > 0 && reqs[0].HasTool("mcp_memnode_"))
	}
	first := requestText(reqs[0])
	assertSessionContext(t, first, "mcp_memnode_search", titles)
	if got := geminiFunctionResponse(t, reqs[len(reqs)-1], "mcp_memnode_search"); !strings.Contains(got, "Edit "+e2ekit.AgentFile) {
		t.Errorf("memnode's search result did not reach the model: %q", got)
	}
	// The re-read of app.js gets memnode's file context, appended to the tool's result by
	// the AfterTool hook that records it: one process for the search, one for the read.
	if got := geminiFunctionResponse(t, reqs[len(reqs)-1], "read_file"); !strings.Contains(got, "memnode: "+e2ekit.AgentFile+" has") {
		t.Errorf("the re-read of %s got no file context: %.3000s", e2ekit.AgentFile, got)
	}
	assertOneHookPerCall(t, hookRuns, 6)
	e2ekit.GrepDataDir(t, in.DataDir, plantedSecret)

	in.MustRun(nil, "uninstall", "gemini-cli")
	assertRestored(t, settings, orig)
}

// geminiFunctionResponse is the text of the function response named name in a Gemini API
// request ("" when there is none).
func geminiFunctionResponse(t *testing.T, r agentcli.Request, name string) string {
	t.Helper()
	var body struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("decode a Gemini API request: %v", err)
	}
	for _, c := range body.Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil && p.FunctionResponse.Name == name {
				return string(p.FunctionResponse.Response)
			}
		}
	}
	return ""
}

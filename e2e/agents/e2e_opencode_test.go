package agents

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// openCodeVersion is the pinned opencode-ai the fixtures were captured from.
const openCodeVersion = "1.18.33"

// openCodeEnv keeps OpenCode offline and quiet (fixtures README).
var openCodeEnv = []string{"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
	"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_CLAUDE_CODE=1"}

// seedOpenCodeDeps makes OpenCode's config dir look as if its plugin SDK were installed: on
// every start OpenCode npm-installs @opencode-ai/plugin into that dir unless node_modules
// exists and package-lock.json lists it (a minute per fresh HOME on a loaded machine).
// memnode's plugin imports nothing from it.
func seedOpenCodeDeps(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock := `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"@opencode-ai/plugin": "` + openCodeVersion + `"}}}}`
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(lock), 0o644); err != nil {
		t.Fatal(err)
	}
}

// semanticHeader starts the per-prompt context block (inject.Semantic).
const semanticHeader = "past observations related to this prompt"

// userMessagesText is the text of the user messages of an OpenAI chat request.
func userMessagesText(t *testing.T, r agentcli.Request) string {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("model request: %v", err)
	}
	var b strings.Builder
	for _, m := range body.Messages {
		if m.Role == "user" {
			b.WriteString(requestText(agentcli.Request{Body: m.Content}))
		}
	}
	return b.String()
}

// TestRealOpenCode runs the real OpenCode from npm, headless (`opencode run`), against a
// fake OpenAI-compatible provider on 127.0.0.1, with memnode's plugin installed: session 1
// reads, fails to read, edits, runs a failing and a passing command, and is recorded and
// summarized; session 2's requests carry memnode's context in the system prompt, the
// prompt's related observations in its user message (semantic inject), and its MCP
// search result, and its re-read of app.js gets memnode's file context; the private secret
// never reaches the data dir; uninstall restores opencode.json byte for byte and removes
// the plugin.
func TestRealOpenCode(t *testing.T) {
	t.Parallel()
	opencode := installCLI(t, "opencode-ai", openCodeVersion, "opencode")
	// app.js is over the file-context size gate, so session 2's re-read gets memnode's
	// history of it.
	var next agentcli.Script
	rig := newAgentRig(t, longAgentFiles(t), &agentcli.OpenAIChat{},
		agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn { return next.Next(r) }))
	app := filepath.Join(rig.project, e2ekit.AgentFile)
	next = agentcli.Sequence(
		agentcli.Turn{Text: "Let me look at the code.", Calls: []agentcli.Call{{Name: "read", Args: map[string]any{"filePath": app}}}},
		// A tool that fails reaches plugins only on the bus (message.part.updated, status error).
		agentcli.Turn{Calls: []agentcli.Call{{Name: "read", Args: map[string]any{"filePath": filepath.Join(rig.project, "NOTES.md")}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "edit", Args: map[string]any{"filePath": app, "oldString": e2ekit.AgentOld, "newString": e2ekit.AgentNew}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "bash", Args: map[string]any{"command": e2ekit.AgentFailCmd, "description": "Run the greeting tests"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "bash", Args: map[string]any{"command": e2ekit.AgentPassCmd, "description": "Run the tests"}}}},
		agentcli.Turn{Text: e2ekit.AgentAnswer1},
		// session 2
		agentcli.Turn{Calls: []agentcli.Call{{Name: "memnode_search", Args: map[string]any{"query": "greeting"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "read", Args: map[string]any{"filePath": app}}}},
		agentcli.Turn{Text: e2ekit.AgentAnswer2},
	)
	config, orig := writeOpenCodeConfig(t, rig)
	configDir := filepath.Dir(config)
	// Per-prompt context is semantic inject: a random tiny encoder (cybertron's real loader
	// and forward pass, no download) embeds session 1, so session 2's prompt gets its
	// related observations.
	if err := embed.WriteRandomModel(filepath.Join(rig.DataDir, "models", "test", "tiny"), embed.TinyModelSpec()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rig.DataDir, "settings.json"), []byte(`{"embed_model":"test/tiny","semantic_inject":true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	rig.MustRun(nil, "install", "opencode")
	rig.Start()
	t.Cleanup(func() { rig.Run(nil, "stop") })

	run := func(prompt string) {
		t.Helper()
		cmd := exec.Command(opencode, "run", "--format", "json", prompt)
		cmd.Dir = rig.project
		cmd.Env = rig.env()
		out := runCLI(t, 3*time.Minute, cmd) // ~20 s on a quiet machine, minutes on a loaded 2-core one
		if out.Code != 0 {
			t.Fatalf("opencode exited %d\nstdout: %.4000s\nstderr: %.4000s", out.Code, out.Stdout, out.Stderr)
		}
	}
	run(agentPrompt1)
	if b := e2ekit.ReadFile(t, app); !strings.Contains(string(b), e2ekit.AgentNew) {
		t.Fatalf("session 1 did not really edit %s:\n%s", e2ekit.AgentFile, b)
	}
	titles := rig.RecordedSession1(t, filepath.Base(rig.project))
	if all := strings.Join(rig.observationTexts(), "\n"); !strings.Contains(all, "NOTES.md") {
		t.Errorf("the failed read of NOTES.md was not recorded:\n%s", all)
	}
	// session.idle's summary: the plugin reads the last answer through OpenCode's client.
	db := rig.Db()
	testkit.WaitForState(t, "session 1's summary", 60*time.Second, func() (bool, string) {
		n := rig.Count(db, "SELECT COUNT(*) FROM summaries WHERE project = ?", filepath.Base(rig.project))
		return n >= 1, strconv.Itoa(n) + " summaries"
	})
	rig.MustRun(nil, "embed", "status", "--wait")
	before := len(rig.model.ModelRequests())

	run(agentPrompt2)
	var reqs []agentcli.Request
	for _, r := range rig.model.ModelRequests()[before:] {
		if r.HasTool("memnode_search") {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) < 3 {
		t.Fatalf("session 2: %d model requests offered memnode_search", len(reqs))
	}
	first := requestText(reqs[0])
	assertSessionContext(t, first, "memnode_search", titles)
	// The prompt's own context rides in the user's message (a synthetic part), not in the
	// system prompt.
	if user := userMessagesText(t, reqs[0]); !strings.Contains(user, agentPrompt2) || !strings.Contains(user, semanticHeader) {
		t.Errorf("session 2's prompt got no per-prompt context in its user message:\n%.4000s", user)
	}
	if searched := requestText(reqs[1]); strings.Count(searched, "Edit "+e2ekit.AgentFile) <= strings.Count(first, "Edit "+e2ekit.AgentFile) {
		t.Errorf("memnode's search result did not reach the model:\n%.4000s", searched)
	}
	// The re-read of app.js gets memnode's file context, appended to the read's output.
	if read := requestText(reqs[2]); !strings.Contains(read, "memnode: "+e2ekit.AgentFile+" has") {
		t.Errorf("the re-read of %s got no file context:\n%.4000s", e2ekit.AgentFile, read)
	}
	e2ekit.GrepDataDir(t, rig.DataDir, plantedSecret)

	rig.MustRun(nil, "uninstall", "opencode")
	assertRestored(t, config, orig)
	if _, err := os.Stat(filepath.Join(configDir, "plugin", "memnode.js")); !os.IsNotExist(err) {
		t.Errorf("plugin left after uninstall: %v", err)
	}
}

// writeOpenCodeConfig points the rig's OpenCode at its model server, allows the tools a
// headless run needs, keeps it offline and seeds its plugin SDK; it returns the config
// file and the bytes written.
func writeOpenCodeConfig(t *testing.T, rig *agentRig) (string, []byte) {
	t.Helper()
	// OpenCode takes its project directory from $PWD, not from its working directory.
	rig.agentEnv = append(append(rig.agentEnv, openCodeEnv...), "PWD="+rig.project)
	configDir := filepath.Join(rig.home, ".config", "opencode")
	config := filepath.Join(configDir, "opencode.json")
	orig := []byte(`{
  "$schema": "https://opencode.ai/config.json",
  "provider": {
    "local": {
      "npm": "@ai-sdk/openai-compatible",
      "options": {"baseURL": "` + rig.model.URL + `/v1", "apiKey": "fake-openai-key"},
      "models": {"local-model": {"tool_call": true, "limit": {"context": 128000, "output": 8192}}}
    }
  },
  "model": "local/local-model",
  "small_model": "local/local-model",
  "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
  "autoupdate": false,
  "share": "disabled"
}
`)
	if err := os.MkdirAll(configDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	seedOpenCodeDeps(t, configDir)
	return config, orig
}

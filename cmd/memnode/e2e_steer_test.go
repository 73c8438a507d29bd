package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// nodeCounters is what a hook that sent something would move: the node's ingest counter,
// the stored records, the node's log and the data dir's spool and hook log.
type nodeCounters struct {
	Ingested     int64
	Observations int
	Prompts      int
	Sessions     int
	NodeLog      string
	Spool        int
	HookLog      string
}

func (c nodeCounters) String() string {
	return fmt.Sprintf("ingested %d, %d observations, %d prompts, %d sessions, node log %d bytes, %d spooled, hook log %q",
		c.Ingested, c.Observations, c.Prompts, c.Sessions, len(c.NodeLog), c.Spool, c.HookLog)
}

func (in *instance) counters(t *testing.T) nodeCounters {
	t.Helper()
	var st struct {
		Status apitype.Status `json:"status"`
	}
	if err := json.Unmarshal([]byte(in.mustRun(nil, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	spool, _ := os.ReadDir(filepath.Join(in.dataDir, "spool"))
	nodeLog, _ := os.ReadFile(filepath.Join(in.dataDir, "logs", "memnode.log"))
	hookLog, _ := os.ReadFile(filepath.Join(in.dataDir, "logs", "hook.log"))
	r := st.Status.Records
	return nodeCounters{Ingested: st.Status.Queue.Ingested, Observations: r.Observations, Prompts: r.Prompts, Sessions: r.Sessions,
		NodeLog: string(nodeLog), Spool: len(spool), HookLog: string(hookLog)}
}

// TestClaudeCodeOffSwitch runs the real Claude Code CLI with memnode's hooks installed:
// with MEMNODE_DISABLED=1 a session sends nothing (the node's counters, its log, the spool
// and the hook log stay as they were, no context is injected); with the project paused
// (memnode pause PROJECT) likewise; after memnode resume the next session is recorded.
func TestClaudeCodeOffSwitch(t *testing.T) {
	claude := agentcli.Install(t, claudePkg, claudeVersion, "claude")
	session := func(word string) []agentcli.Turn {
		return []agentcli.Turn{
			{Calls: []agentcli.Call{{Name: "Bash", Args: map[string]string{"command": "python3 -c \"print('" + word + "')\"", "description": "say " + word}}}},
			{Text: "Said " + word + "."},
		}
	}
	var turns []agentcli.Turn
	for _, w := range []string{"disabled-word", "paused-word", "resumed-word"} {
		turns = append(turns, session(w)...)
	}
	rig := newAgentRig(t, greetingProject(), &agentcli.AnthropicMessages{}, agentcli.Sequence(turns...))
	rig.agentEnv = []string{
		"ANTHROPIC_BASE_URL=" + rig.model.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	}
	rig.start()
	rig.mustRun(nil, "install", "claude-code")
	// One recorded session first, so that a session start would have context to inject.
	seed := `{"session_id":"seed","cwd":` + jsonString(rig.project) + `,"hook_event_name":"UserPromptSubmit","prompt":"seed the memory"}`
	rig.mustRun([]byte(seed), "hook", "claude-code", "session-init")
	obs := `{"session_id":"seed","cwd":` + jsonString(rig.project) + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"python3 test_app.py"},"tool_response":{"stdout":"ok","exitCode":0}}`
	rig.mustRun([]byte(obs), "hook", "claude-code", "observation")
	testkit.WaitForState(t, "the seed observation", 30*time.Second, func() (bool, string) {
		c := rig.counters(t)
		return c.Observations == 1 && rig.queued() == 0, c.String()
	})
	args := []string{"--output-format", "json", "--allowedTools", "Bash", "--model", "claude-sonnet-4-5"}
	project := filepath.Base(rig.project)

	run := func(prompt string, extra ...string) []agentcli.Request {
		t.Helper()
		n := len(rig.turns())
		saved := rig.agentEnv
		rig.agentEnv = append(append([]string(nil), saved...), extra...)
		rig.runAgent(claude, append([]string{"-p", prompt}, args...)...)
		rig.agentEnv = saved
		return rig.turns()[n:]
	}
	same := func(what string, before nodeCounters) {
		t.Helper()
		if after := rig.counters(t); after != before {
			t.Errorf("%s: the node or the data dir moved:\nbefore %s\nafter  %s", what, before, after)
		}
	}

	// Off: nothing sent, nothing written, no context.
	before := rig.counters(t)
	reqs := run("say disabled-word", "MEMNODE_DISABLED=1")
	if len(reqs) != 2 {
		t.Fatalf("the disabled session made %d model requests, want 2", len(reqs))
	}
	if reqs[0].Contains("# memnode: memory of project") {
		t.Errorf("a disabled session got memnode's context")
	}
	same("MEMNODE_DISABLED=1", before)

	// Paused: the same, until resumed.
	if out := rig.mustRun(nil, "pause", project); !strings.Contains(out, "project "+project+" paused") {
		t.Errorf("memnode pause %s said %q", project, out)
	}
	if out := rig.mustRun(nil, "status"); !strings.Contains(out, "capture:     project "+project+" paused until 'memnode resume'") {
		t.Errorf("memnode status does not show the pause:\n%s", out)
	}
	reqs = run("say paused-word")
	if reqs[0].Contains("# memnode: memory of project") {
		t.Errorf("a paused project's session got memnode's context")
	}
	same("memnode pause "+project, before)

	rig.mustRun(nil, "resume", project)
	reqs = run("say resumed-word")
	if !reqs[0].Contains("# memnode: memory of project") {
		t.Errorf("after memnode resume the session got no context")
	}
	testkit.WaitForState(t, "the resumed session's echo is recorded", 30*time.Second, func() (bool, string) {
		all := strings.Join(rig.observationTexts(), "\n")
		return strings.Contains(all, "resumed-word"), all
	})
	all := strings.Join(rig.observationTexts(), "\n")
	for _, w := range []string{"disabled-word", "paused-word"} {
		if strings.Contains(all, w) {
			t.Errorf("%s was recorded", w)
		}
	}
}

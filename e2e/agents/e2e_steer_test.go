package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// TestClaudeCodeOffSwitch runs the real Claude Code CLI with memnode's hooks installed:
// with MEMNODE_DISABLED=1 a session sends nothing (the node's counters, its log, the spool
// and the hook log stay as they were, no context is injected); with the project paused
// (memnode pause PROJECT) likewise; after memnode resume the next session is recorded.
func TestClaudeCodeOffSwitch(t *testing.T) {
	t.Parallel()
	claude := installCLI(t, claudePkg, claudeVersion, "claude")
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
	rig.Start()
	rig.MustRun(nil, "install", "claude-code")
	// One recorded session first, so that a session start would have context to inject.
	seed := `{"session_id":"seed","cwd":` + e2ekit.JsonString(rig.project) + `,"hook_event_name":"UserPromptSubmit","prompt":"seed the memory"}`
	rig.MustRun([]byte(seed), "hook", "claude-code", "session-init")
	obs := `{"session_id":"seed","cwd":` + e2ekit.JsonString(rig.project) + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"python3 test_app.py"},"tool_response":{"stdout":"ok","exitCode":0}}`
	rig.MustRun([]byte(obs), "hook", "claude-code", "observation")
	testkit.WaitForState(t, "the seed observation", 30*time.Second, func() (bool, string) {
		c := rig.Counters(t)
		return c.Observations == 1 && rig.Queued() == 0, c.String()
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
	same := func(what string, before e2ekit.NodeCounters) {
		t.Helper()
		if after := rig.Counters(t); after != before {
			t.Errorf("%s: the node or the data dir moved:\nbefore %s\nafter  %s", what, before, after)
		}
	}

	// Off: nothing sent, nothing written, no context.
	before := rig.Counters(t)
	reqs := run("say disabled-word", "MEMNODE_DISABLED=1")
	if len(reqs) != 2 {
		t.Fatalf("the disabled session made %d model requests, want 2", len(reqs))
	}
	if reqs[0].Contains("# memnode: memory of project") {
		t.Errorf("a disabled session got memnode's context")
	}
	same("MEMNODE_DISABLED=1", before)

	// Paused: the same, until resumed.
	if out := rig.MustRun(nil, "pause", project); !strings.Contains(out, "project "+project+" paused") {
		t.Errorf("memnode pause %s said %q", project, out)
	}
	if out := rig.MustRun(nil, "status"); !strings.Contains(out, "capture:     project "+project+" paused until 'memnode resume'") {
		t.Errorf("memnode status does not show the pause:\n%s", out)
	}
	var js struct {
		Status apitype.Status `json:"status"`
	}
	if err := json.Unmarshal([]byte(rig.MustRun(nil, "status", "--json")), &js); err != nil || len(js.Status.Capture) != 1 ||
		js.Status.Capture[0] != "project "+project+" paused until 'memnode resume'" {
		t.Errorf("the node's status (the viewer's badge) does not show the pause: %q %v", js.Status.Capture, err)
	}
	reqs = run("say paused-word")
	if reqs[0].Contains("# memnode: memory of project") {
		t.Errorf("a paused project's session got memnode's context")
	}
	same("memnode pause "+project, before)

	rig.MustRun(nil, "resume", project)
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

// TestPinnedAndGlobalNotesSync: on two paired devices, a global note saved on A heads the
// context of the first session of a brand-new project on B, and a note pinned on A heads
// its project's context on B; B's unpin reaches A (the pin is a register that converges).
func TestPinnedAndGlobalNotesSync(t *testing.T) {
	t.Parallel()
	ports := e2ekit.SyncPorts{}
	a, b := e2ekit.NewSyncNode(t, "dev-a", ports), e2ekit.NewSyncNode(t, "dev-b", ports)
	for _, n := range []*e2ekit.SyncNode{a, b} {
		n.StartSync(t)
	}
	if out := b.MustRun(nil, "peers", "join", a.Invite("2m")); !strings.Contains(out, "Joined") {
		t.Fatalf("join: %s", out)
	}

	// A project with memory on A, and a note in it that A pins.
	a.Write("parseManifest")
	var saved apitype.SaveResult
	if err := json.Unmarshal([]byte(a.MustRun(nil, "save", "Release builds run make dist, never go build by hand", "--project", "syncproj", "--json")), &saved); err != nil {
		t.Fatal(err)
	}
	if out := a.MustRun(nil, "pin", saved.ID); !strings.Contains(out, "pinned") {
		t.Errorf("memnode pin said %q", out)
	}
	if out := a.MustRun(nil, "save", "--global", "I use pnpm, never npm"); !strings.Contains(out, "global note") {
		t.Errorf("memnode save --global said %q", out)
	}

	// B: a new project, its first session.
	fresh := filepath.Join(t.TempDir(), "brand-new")
	if err := os.MkdirAll(filepath.Join(fresh, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	var ctxB string
	e2ekit.Poll(t, "the global note to reach B's context of a new project", 60*time.Second, func() bool {
		ctxB = e2ekit.ContextFor(t, b.Instance, fresh)
		return strings.Contains(ctxB, "I use pnpm, never npm")
	})
	head := strings.Index(ctxB, "## Always keep in mind")
	if head < 0 || strings.Index(ctxB, "I use pnpm") < head || strings.Contains(ctxB, "Release builds") {
		t.Errorf("B's new project context: the global note must head it, the other project's pin must not be there:\n%s", ctxB)
	}
	var proj string
	e2ekit.Poll(t, "A's pin to reach B", 60*time.Second, func() bool {
		proj = e2ekit.ContextFor(t, b.Instance, b.Proj)
		return strings.Contains(proj, "📌 Release builds run make dist")
	})
	if p, g, rows := strings.Index(proj, "📌 Release builds"), strings.Index(proj, "🌐 (global)"), strings.Index(proj, "## Recent observations"); g < 0 || p < g || rows < p {
		t.Errorf("B's context of syncproj: pinned and global notes must come first, newest first:\n%s", proj)
	}

	// B unpins; A's context no longer heads with it.
	b.MustRun(nil, "unpin", saved.ID)
	e2ekit.Poll(t, "B's unpin to reach A", 60*time.Second, func() bool {
		return !strings.Contains(e2ekit.ContextFor(t, a.Instance, a.Proj), "📌 Release builds")
	})
	if ctxA := e2ekit.ContextFor(t, a.Instance, a.Proj); !strings.Contains(ctxA, "🌐 (global) I use pnpm") {
		t.Errorf("A lost the global note:\n%s", ctxA)
	}
}

// sessionStart runs the real context hook for a new session in proj and returns what the
// model gets and what the user is shown.
func sessionStart(t *testing.T, in *e2ekit.Instance, proj string) (context, userLine string) {
	t.Helper()
	payload := `{"session_id":"s-` + filepath.Base(proj) + `","cwd":` + e2ekit.JsonString(proj) + `,"hook_event_name":"SessionStart","source":"startup"}`
	r := in.RunLean([]byte(payload), "hook", "claude-code", "context")
	var out struct {
		SystemMessage      string `json:"systemMessage"`
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &out) != nil {
		t.Fatalf("context hook: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	return out.HookSpecificOutput.AdditionalContext, out.SystemMessage
}

// TestContextSpeaksUp: a project with no memory gets a welcome block and the user a line;
// a healthy node (its provider answering) puts no health notice in the context; a node whose
// provider answered 401 (and is disabled for it) puts one line saying so into the next
// session-start context and the user's line; context_system_message_off drops the line.
func TestContextSpeaksUp(t *testing.T) {
	t.Parallel()
	key := "sk-ant-test-" + strings.Repeat("k", 24)
	fake := e2ekit.NewFakeAnthropic(t, key, 0)
	record := func(in *e2ekit.Instance, proj, word string) {
		t.Helper()
		for _, ev := range []struct{ name, payload string }{
			{"session-init", `{"session_id":"s-` + word + `","cwd":` + e2ekit.JsonString(proj) + `,"hook_event_name":"UserPromptSubmit","prompt":"run the ` + word + ` job"}`},
			{"observation", `{"session_id":"s-` + word + `","cwd":` + e2ekit.JsonString(proj) + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t-` + word + `","tool_input":{"command":"make mk-` + word + `"},"tool_response":{"stdout":"done mk-` + word + `","exitCode":0}}`},
		} {
			if r := in.RunLean([]byte(ev.payload), "hook", "claude-code", ev.name); r.Code != 0 {
				t.Fatalf("%s hook: exit %d %s", ev.name, r.Code, r.Stderr)
			}
		}
	}

	// Healthy: the provider answers.
	healthy := e2ekit.NewInstance(t)
	e2ekit.UseFakeAnthropic(t, healthy, key, fake.Url)
	healthy.Start()
	fresh := e2ekit.GitDir(t, "fresh-app")
	text, line := sessionStart(t, healthy, fresh)
	if !strings.Contains(text, `# memnode: no memory of project "fresh-app" yet`) || !strings.Contains(text, "save_memory") ||
		strings.Contains(text, "# memnode: memory of project") {
		t.Errorf("no welcome block for a project without memory:\n%s", text)
	}
	if line != "memnode: no memory of this project yet, recording from now on · viewer: memnode viewer" {
		t.Errorf("user line for a new project: %q", line)
	}
	proj := e2ekit.GitDir(t, "billing")
	record(healthy, proj, "0001")
	testkit.WaitFor(t, "the provider's observation", 30*time.Second, func() bool {
		return healthy.Count(healthy.Db(), "SELECT COUNT(*) FROM observations WHERE model = 'claude-fake-1'") == 1
	})
	text, line = sessionStart(t, healthy, proj)
	if strings.Contains(text, "memnode health") || strings.Contains(line, "⚠") {
		t.Errorf("a healthy node put a health notice:\n%s\nuser: %s", text, line)
	}
	if line != "memnode: 1 memory from 1 session · viewer: memnode viewer" {
		t.Errorf("user line: %q", line)
	}

	// A wrong key: the provider answers 401 and is disabled.
	broken := e2ekit.NewInstance(t)
	e2ekit.UseFakeAnthropic(t, broken, "sk-ant-test-"+strings.Repeat("x", 24), fake.Url)
	broken.Start()
	if text, _ := sessionStart(t, broken, proj); strings.Contains(text, "memnode health") {
		t.Errorf("a health notice before anything failed:\n%s", text)
	}
	record(broken, proj, "0002")
	testkit.WaitForState(t, "the provider disabled after its 401", 30*time.Second, func() (bool, string) {
		out := broken.MustRun(nil, "status")
		return strings.Contains(out, "auth_invalid 1, skipped until") && broken.Queued() == 0, out
	})
	text, line = sessionStart(t, broken, proj)
	if !strings.Contains(text, "⚠ memnode health: AI provider anthropic is disabled until") || strings.Count(text, "memnode health") != 1 {
		t.Errorf("no health line after the 401:\n%s", text)
	}
	if !strings.Contains(line, "· ⚠ AI provider anthropic is disabled until") {
		t.Errorf("the user's line does not say it: %q", line)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "memnode health") && strings.Contains(l, key) {
			t.Errorf("the health line holds a key: %s", l)
		}
	}

	broken.MustRun(nil, "config", "set", "context_system_message_off", "true")
	broken.MustRun(nil, "stop")
	broken.Start()
	if _, line := sessionStart(t, broken, proj); line != "" {
		t.Errorf("context_system_message_off: the user still gets %q", line)
	}
}

package hooks

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/platform/claudecode"

	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/platform/registry"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
)

const sid = "5f0c9a3e-1b2d-4c7e-9f10-aa11bb22cc33"

// newProject makes a git project dir named demo-app and returns its path.
func newProject(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "demo-app")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func TestRunEventOutputs(t *testing.T) {
	n := newFakeNode(t)
	n.context = "<memnode-context>\n# demo-app: 3 observations\n</memnode-context>\n"
	cfg := n.config(t)
	cwd := newProject(t)
	base := map[string]any{"session_id": sid, "cwd": cwd, "transcript_path": "/nonexistent.jsonl"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	neutral := map[string]any{"continue": true, "suppressOutput": true}
	cases := []struct {
		event   string
		payload map[string]any
		want    map[string]any
		kind    string // event the node must receive, "" for none
	}{
		{"context", with("hook_event_name", "SessionStart", "source", "startup"), map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName": "SessionStart", "additionalContext": "<memnode-context>\n# demo-app: 3 observations\n" +
				"memnode's MCP tools here are mcp__memnode__search, mcp__memnode__timeline and mcp__memnode__get_observations (load them first if they are deferred).\n" +
				"</memnode-context>"}}, memory.KindSessionStart},
		{"session-init", with("prompt", "fix the login bug"), neutral, memory.KindPrompt},
		{"file-context", with("tool_name", "Read", "tool_input", map[string]any{"file_path": filepath.Join(cwd, "nope.go")}), neutral, ""},
		{"observation", with("tool_name", "Bash", "tool_input", map[string]any{"command": "ls"}, "tool_response", map[string]any{"stdout": "a\n"}), neutral, memory.KindObservation},
		{"observation", with("tool_input", map[string]any{"command": "ls"}), neutral, ""},               // no tool_name
		{"observation", with("tool_name", "AskUserQuestion"), neutral, ""},                              // skipped tool
		{"observation", with("tool_name", "TodoWrite"), neutral, ""},                                    // housekeeping
		{"observation", with("tool_name", "mcp__memnode__search"), neutral, ""},                         // our own MCP tool
		{"observation", with("tool_name", "ToolSearch"), neutral, ""},                                   // bookkeeping
		{"summarize", with("stop_hook_active", true), neutral, ""},                                      // re-entered Stop
		{"summarize", with("agent_id", "agent-7"), neutral, ""},                                         // subagent
		{"summarize", with("last_assistant_message", "Done: fixed it."), neutral, memory.KindSummarize}, // Codex-style direct message
		{"summarize", with(), neutral, ""},                                                              // unreadable transcript
		{"session-end", with("reason", "prompt_input_exit"), neutral, memory.KindSessionEnd},
	}
	cfg.SkipTools = []string{"AskUserQuestion"}
	for _, c := range cases {
		before := len(n.Events())
		r := runHook(t, cfg, c.event, c.payload)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%s: code %d stderr %q", c.event, r.code, r.stderr)
		}
		if !reflect.DeepEqual(r.out, c.want) {
			t.Errorf("%s %v: output %v, want %v", c.event, c.payload, r.out, c.want)
		}
		got := n.Events()[before:]
		switch {
		case c.kind == "" && len(got) != 0:
			t.Errorf("%s %v: sent %+v, want nothing", c.event, c.payload, got)
		case c.kind != "" && (len(got) != 1 || got[0].Kind != c.kind):
			t.Errorf("%s: sent %+v, want one %s", c.event, got, c.kind)
		case c.kind != "":
			ev := got[0]
			if len(ev.EventID) != 32 || ev.Project != "demo-app" || ev.SessionID != sid || ev.Platform != "claude-code" || !ev.At.Equal(cfg.Now()) {
				t.Errorf("%s: common fields %+v", c.event, ev)
			}
		}
	}
	evs := n.Events()
	if evs[0].Reason != "startup" || evs[1].Prompt != "fix the login bug" || string(evs[2].ToolInput) != `{"command":"ls"}` ||
		evs[3].LastAssistantMessage != "Done: fixed it." || evs[4].Reason != "prompt_input_exit" {
		t.Fatalf("event fields: %+v", evs)
	}
}

func TestPromptPrivacy(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	cwd := newProject(t)
	cases := []struct {
		prompt any
		want   *apitype.Event // nil: nothing sent
	}{
		{"<private>SECRET-only</private>", &apitype.Event{Private: true}},
		{"  <private>\nSECRET-multi\nline</private>\n", &apitype.Event{Private: true}},
		{"", &apitype.Event{Prompt: mediaPrompt}},
		{"   ", &apitype.Event{Prompt: mediaPrompt}},
		{[]any{map[string]any{"type": "image", "source": "x"}}, &apitype.Event{Prompt: mediaPrompt}},
		{"deploy it <private>password SECRET-pw</private> now", &apitype.Event{Prompt: "deploy it  now"}},
		{"<task-notification><task-id>t1</task-id><status>completed</status></task-notification>", nil},
	}
	for _, c := range cases {
		before := len(n.Events())
		r := runHook(t, cfg, "session-init", map[string]any{"session_id": sid, "cwd": cwd, "prompt": c.prompt})
		if r.code != 0 {
			t.Fatalf("code %d", r.code)
		}
		got := n.Events()[before:]
		if c.want == nil {
			if len(got) != 0 {
				t.Errorf("%q: sent %+v", c.prompt, got)
			}
			continue
		}
		if len(got) != 1 || got[0].Prompt != c.want.Prompt || got[0].Private != c.want.Private {
			t.Errorf("%q: sent %+v, want prompt %q private %v", c.prompt, got, c.want.Prompt, c.want.Private)
		}
	}
	if strings.Contains(n.Seen(), "SECRET-") {
		t.Fatalf("a secret reached the node:\n%s", n.Seen())
	}
}

// replaySession feeds the fixture session to the hooks, with cwd and transcript_path
// rewritten to real paths, and returns the outputs per line.
func replaySession(t *testing.T, cfg Config, cwd string) []hookRun {
	t.Helper()
	transcript, err := filepath.Abs("../testdata/fixtures/claude-code/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("../testdata/fixtures/claude-code/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var runs []hookRun
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.ReplaceAll(sc.Bytes(), []byte("/home/dev/demo-app"), []byte(cwd))
		var call struct {
			Event   string                     `json:"event"`
			Payload map[string]json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(line, &call); err != nil {
			t.Fatal(err)
		}
		call.Payload["transcript_path"], _ = json.Marshal(transcript)
		runs = append(runs, runHook(t, cfg, call.Event, call.Payload))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return runs
}

func writeSourceFile(t *testing.T, path string, size int, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Repeat([]byte("// x\n"), size/5+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestFixtureSessionReplay(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	cwd := newProject(t)
	file := filepath.Join(cwd, "internal/auth/middleware.go")
	created := time.Date(2026, 11, 27, 16, 5, 0, 0, time.UTC)
	writeSourceFile(t, file, 2000, created.Add(-time.Hour))
	n.byFile[file] = []apitype.FileObservation{{ID: "obs-9", SessionID: "s0", Type: "bugfix", Title: "Expired JWT gave 500", CreatedAt: created.UnixMilli(),
		FilesModified: []string{"internal/auth/middleware.go"}}}

	runs := replaySession(t, cfg, cwd)
	for i, r := range runs {
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("call %d: code %d stderr %q", i, r.code, r.stderr)
		}
	}
	fc := runs[2].out["hookSpecificOutput"].(map[string]any)["additionalContext"].(string)
	if !strings.Contains(fc, "obs-9 16:05 🔴 Expired JWT gave 500") || !strings.Contains(fc, "mcp__memnode__get_observations([IDs])") {
		t.Fatalf("file-context output:\n%s", fc)
	}

	var kinds []string
	for _, ev := range n.Events() {
		kinds = append(kinds, ev.Kind+":"+ev.ToolName)
	}
	want := []string{"session-start:", "prompt:", "observation:Read", "observation:Edit", "observation:Bash", "observation:Bash",
		"prompt:", "observation:Grep", "summarize:", "session-end:"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("events:\n%v\nwant\n%v", kinds, want)
	}
	evs := n.Events()
	if evs[6].Private != true || evs[6].Prompt != "" {
		t.Errorf("private-only prompt sent as %+v", evs[6])
	}
	if evs[7].AgentID != "agent-7" || evs[7].AgentType != "general-purpose" {
		t.Errorf("subagent observation lost its agent: %+v", evs[7])
	}
	if !strings.HasPrefix(evs[8].LastAssistantMessage, "Fixed: the middleware ignored the parse error") {
		t.Errorf("summary message = %q", evs[8].LastAssistantMessage)
	}
	if !strings.Contains(string(evs[5].ToolInput), "curl -s -H 'Authorization: Bearer ' localhost:8080/login") {
		t.Errorf("private part of a tool input not stripped cleanly: %s", evs[5].ToolInput)
	}
	if strings.Contains(n.Seen(), "SECRET-") {
		t.Fatalf("a SECRET- byte reached the node:\n%s", n.Seen())
	}
	if spooled(t, cfg.DataDir) != nil {
		t.Fatal("events spooled while the node was up")
	}

	// The same session with the node down: everything goes to the spool, still clean.
	down := cfg
	down.BaseURL = deadURL(t)
	down.DataDir = t.TempDir()
	down.FailLoudThreshold = 100
	runs = replaySession(t, down, cwd)
	for i, r := range runs {
		if r.code != 0 {
			t.Fatalf("node down, call %d: code %d", i, r.code)
		}
	}
	if got := len(spooled(t, down.DataDir)); got != len(want) {
		t.Fatalf("spooled %d events, want %d", got, len(want))
	}
	assertNoSecretUnder(t, down.DataDir)
}

// assertNoSecretUnder greps every file below dir.
func assertNoSecretUnder(t *testing.T, dir string) {
	t.Helper()
	for _, f := range testkit.FilesContaining(t, dir, "SECRET-") {
		t.Errorf("%s contains a secret", f)
	}
}

// deadURL returns the URL of a loopback port nobody listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	n := newFakeNode(t)
	u := n.srv.URL
	n.srv.Close()
	return u
}

func TestNodeDownSpoolsThenFailsLoud(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	up := cfg.BaseURL
	cfg.BaseURL = deadURL(t)
	var starts atomic.Int32
	cfg.Start = func(ctx context.Context) error {
		starts.Add(1)
		return errors.New("cannot start")
	}
	payload := map[string]any{"session_id": sid, "cwd": newProject(t), "tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}}
	for i, wantCode := range []int{0, 0, 2, 2} {
		r := runHook(t, cfg, "observation", payload)
		if r.code != wantCode {
			t.Fatalf("hook %d: code %d, want %d", i+1, r.code, wantCode)
		}
		if !reflect.DeepEqual(r.out, map[string]any{"continue": true, "suppressOutput": true}) {
			t.Fatalf("hook %d: output %v", i+1, r.out)
		}
		if wantCode == 0 && r.stderr != "" {
			t.Fatalf("hook %d: stderr %q", i+1, r.stderr)
		}
		if wantCode == 2 {
			if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "node unreachable for") ||
				!strings.Contains(r.stderr, filepath.Join(cfg.DataDir, "spool")) || strings.Contains(r.stderr, n.token) {
				t.Fatalf("hook %d: stderr %q", i+1, r.stderr)
			}
		}
		if got := len(spooled(t, cfg.DataDir)); got != i+1 {
			t.Fatalf("hook %d: %d events spooled", i+1, got)
		}
	}
	if starts.Load() != 4 {
		t.Fatalf("Start called %d times, want once per hook", starts.Load())
	}

	// The node comes back: the next hook succeeds and resets the counter.
	cfg.BaseURL = up
	if r := runHook(t, cfg, "observation", payload); r.code != 0 || r.stderr != "" {
		t.Fatalf("after recovery: code %d stderr %q", r.code, r.stderr)
	}
	if st := readFailures(cfg.DataDir); st.ConsecutiveFailures != 0 {
		t.Fatalf("counter not reset: %+v", st)
	}
	cfg.BaseURL = deadURL(t)
	if r := runHook(t, cfg, "observation", payload); r.code != 0 {
		t.Fatalf("first failure after reset: code %d", r.code)
	}
}

func TestHangingStartStillAnswersAndSpools(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	cfg.BaseURL = deadURL(t)
	cfg.Timeout = 400 * time.Millisecond
	var deadline time.Time
	cfg.Start = func(ctx context.Context) error {
		deadline, _ = ctx.Deadline()
		<-ctx.Done() // a node that never becomes ready
		return ctx.Err()
	}
	began := time.Now()
	r := runHook(t, cfg, "session-end", map[string]any{"session_id": sid, "cwd": "/tmp", "reason": "exit"})
	if r.code != 0 || r.out["continue"] != true {
		t.Fatalf("code %d out %v", r.code, r.out)
	}
	if deadline.IsZero() || deadline.After(began.Add(cfg.Timeout)) {
		t.Fatalf("Start got deadline %v, want within the hook budget from %v", deadline, began)
	}
	if evs := spooled(t, cfg.DataDir); len(evs) != 1 || evs[0].Kind != memory.KindSessionEnd {
		t.Fatalf("spool = %+v", evs)
	}
}

func TestMissingTokenStartsNodeAndRetries(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	tokenFile := filepath.Join(cfg.DataDir, "token")
	if err := os.Remove(tokenFile); err != nil {
		t.Fatal(err)
	}
	starts := 0
	cfg.Start = func(ctx context.Context) error {
		starts++
		return os.WriteFile(tokenFile, []byte(n.token), 0o600) // what a starting node does
	}
	r := runHook(t, cfg, "session-end", map[string]any{"session_id": sid, "cwd": "/tmp", "reason": "exit"})
	if r.code != 0 || starts != 1 || len(n.Events()) != 1 || spooled(t, cfg.DataDir) != nil {
		t.Fatalf("code %d starts %d events %d", r.code, starts, len(n.Events()))
	}
}

func TestServerErrors(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	payload := map[string]any{"session_id": sid, "cwd": "/tmp", "reason": "exit"}

	n.eventStatus = 503 // up but not ready: spool, count a failure
	if r := runHook(t, cfg, "session-end", payload); r.code != 0 {
		t.Fatalf("code %d", r.code)
	}
	if len(spooled(t, cfg.DataDir)) != 1 || readFailures(cfg.DataDir).ConsecutiveFailures != 1 {
		t.Fatalf("503: spool %d failures %+v", len(spooled(t, cfg.DataDir)), readFailures(cfg.DataDir))
	}
	n.eventStatus = 400 // the node is there and said no: do not spool what it rejected
	if r := runHook(t, cfg, "session-end", payload); r.code != 0 {
		t.Fatalf("code %d", r.code)
	}
	if len(spooled(t, cfg.DataDir)) != 1 || readFailures(cfg.DataDir).ConsecutiveFailures != 0 {
		t.Fatal("400 must neither spool nor count as a failure")
	}
	n.eventStatus = 0
	cfg2 := cfg
	if err := os.WriteFile(filepath.Join(cfg2.DataDir, "token"), []byte("stale"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runHook(t, cfg2, "session-end", payload)
	if r.code != 0 || len(spooled(t, cfg.DataDir)) != 2 {
		t.Fatal("401 must spool")
	}
	if strings.Contains(r.stdout+r.stderr, "stale") {
		t.Fatal("token printed")
	}
}

func TestUnknownPlatformEventAndBadInput(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), registry.Builtin(), nil, cfg.DataDir, configs.Default(), nil, "", []string{"vim", "context"},
		strings.NewReader("{}"), &out, &errb); code != 0 || out.String() != "{}\n" ||
		!strings.HasPrefix(errb.String(), "memnode: unknown hook platform \"vim\" (known: claude-code") || strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("unknown platform: %d %q %q", code, out.String(), errb.String())
	}
	r := runHook(t, cfg, "teleport", `{"session_id":"x"}`)
	if r.code != 0 || r.out["continue"] != true || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("unknown event: %+v", r)
	}
	for _, in := range []string{"", "   ", "not json", `["array"]`, `{"session_id": 5}`, `{"prompt": "x"`} {
		r := runHook(t, cfg, "session-init", in)
		if r.code != 0 || r.out["continue"] != true || r.stderr != "" {
			t.Fatalf("input %q: %+v", in, r)
		}
		r = runHook(t, cfg, "context", in)
		if r.code != 0 || r.out["hookSpecificOutput"] == nil {
			t.Fatalf("context with input %q: %+v", in, r)
		}
	}
	if len(n.Events()) != 0 {
		t.Fatalf("bad input produced events: %+v", n.Events())
	}
	if b, err := os.ReadFile(filepath.Join(cfg.DataDir, "logs", "hook.log")); err != nil || !bytes.Contains(b, []byte("empty hook input")) {
		t.Fatalf("empty stdin not noted in hook.log: %v %s", err, b)
	}
}

func TestExcludedProject(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	cfg.ExcludedProjects = []string{"demo-*"}
	cwd := newProject(t)
	for _, ev := range []string{"session-init", "observation", "session-end", "context"} {
		runHook(t, cfg, ev, map[string]any{"session_id": sid, "cwd": filepath.Join(cwd), "prompt": "x", "tool_name": "Bash"})
	}
	if len(n.Events()) != 0 || n.Seen() != "" {
		t.Fatalf("excluded project contacted the node: %s", n.Seen())
	}
}

func TestProjectName(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "home", "me", "src", "shop")
	sub := filepath.Join(repo, "web", "cmd")
	worktree := filepath.Join(root, "home", "me", "wt-shop")
	linked := filepath.Join(root, "home", "me", "shop-feature") // git worktree add ../shop-feature
	plain := filepath.Join(root, "home", "me", "scratch", "play")
	for _, d := range []string{filepath.Join(repo, ".git", "worktrees", "shop-feature"), sub, worktree, filepath.Join(linked, "pkg"), plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(worktree, ".git"), []byte("gitdir: /x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitdir := "gitdir: " + filepath.Join(repo, ".git", "worktrees", "shop-feature") + "\n"
	if err := os.WriteFile(filepath.Join(linked, ".git"), []byte(gitdir), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home", "me")
	if err := os.MkdirAll(filepath.Join(home, ".git"), 0o755); err != nil { // a dotfiles repo
		t.Fatal(err)
	}
	cases := map[string]string{repo: "shop", sub: "shop", worktree: "wt-shop", linked: "shop", filepath.Join(linked, "pkg"): "shop",
		plain: "play", "": "unknown"}
	for cwd, want := range cases {
		if got := ProjectName(cwd, home); got != want {
			t.Errorf("ProjectName(%q) = %q, want %q", cwd, got, want)
		}
	}
}

// TestRunLeavesNoGoroutines: a hook is a short process, but Run is also called in-process
// (tests, benchmarks, the CLI's own tests) and must not leave transport goroutines behind.
func TestRunLeavesNoGoroutines(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	runHook(t, cfg, "session-end", map[string]any{"session_id": sid, "cwd": "/tmp", "reason": "exit"})
	runHook(t, cfg, "context", map[string]any{"session_id": sid, "cwd": "/tmp"})
	if len(n.Events()) != 2 {
		t.Fatalf("events %d", len(n.Events()))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "persistConn") && !strings.Contains(stacks, "memnode/hooks.(*hook)") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left after Run:\n%s", stacks)
		}
		runtime.Gosched()
	}
}

// transcriptLine is one JSONL transcript line.
func transcriptLine(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func TestSummarizeCleansTranscript(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	p := filepath.Join(t.TempDir(), "t.jsonl")
	content := transcriptLine(t, map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant",
		"content": "Done. <private>the key is SECRET-abc</private> Use AKIAIOSFODNN7EXAMPLE next time."}})
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	runHook(t, cfg, "summarize", map[string]any{"session_id": sid, "cwd": "/tmp", "transcript_path": p})
	evs := n.Events()
	if len(evs) != 1 || !strings.HasPrefix(evs[0].LastAssistantMessage, "Done.") || strings.Contains(n.Seen(), "SECRET-") || strings.Contains(n.Seen(), "AKIAIOSFODNN7EXAMPLE") {
		t.Fatalf("events %+v\nseen %s", evs, n.Seen())
	}
	// Wholly private answer: nothing to summarize.
	content = transcriptLine(t, map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": "<private>SECRET-x</private>"}})
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	runHook(t, cfg, "summarize", map[string]any{"session_id": sid, "cwd": "/tmp", "transcript_path": p})
	if len(n.Events()) != 1 {
		t.Fatalf("private-only answer was sent: %+v", n.Events())
	}
}

// TestProjectDirNamesTheProject: the project root the agent passes (CLAUDE_PROJECT_DIR)
// names the project even when the hook runs in another directory.
func TestProjectDirNamesTheProject(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	proj := newProject(t) // demo-app
	cfg.ProjectDir = proj
	elsewhere := filepath.Join(t.TempDir(), "scratch")
	r := runHook(t, cfg, "session-end", map[string]any{"session_id": sid, "cwd": elsewhere, "reason": "other"})
	if evs := n.Events(); r.code != 0 || len(evs) != 1 || evs[0].Project != "demo-app" {
		t.Fatalf("events %+v", evs)
	}
	env := map[string]string{"CLAUDE_PROJECT_DIR": proj}
	if got := projectDir(claudecode.Platform(), func(k string) string { return env[k] }); got != proj {
		t.Fatalf("projectDir = %q, want %q", got, proj)
	}
	if got := projectDir(claudecode.Platform(), nil); got != "" {
		t.Fatalf("projectDir without an environment = %q", got)
	}
}

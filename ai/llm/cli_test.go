package llm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/ai/offline"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
)

// fakeCLI writes an executable shell script standing in for an agent CLI: it records its
// arguments, environment, working dir and stdin in dir, then runs body.
func fakeCLI(t *testing.T, name, body string) (exe, dir string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake agent CLI is a shell script")
	}
	dir = t.TempDir()
	exe = filepath.Join(dir, name)
	script := "#!/bin/sh\n" +
		"for a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + dir + "/args\n" +
		"env > " + dir + "/env\n" +
		"pwd > " + dir + "/cwd\n" +
		"cat > " + dir + "/stdin\n" + body + "\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, dir
}

// hasArgs reports whether want appears in args as consecutive arguments.
func hasArgs(args, want []string) bool {
	for i := range args {
		if i+len(want) <= len(args) && slices.Equal(args[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func newTestCLI(t *testing.T, kind, exe string) *CLI {
	t.Helper()
	c, err := NewCLI(CLIConfig{Kind: kind, Path: exe, WorkDir: filepath.Join(t.TempDir(), memory.CompressorProject),
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), DisabledEnv + "=0"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

const claudeOK = `{"type":"result","subtype":"success","is_error":false,"result":"<observation><type>change</type><title>Fixed the greeting</title></observation>","usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":10},"modelUsage":{"claude-haiku-5-5":{"inputTokens":1200,"outputTokens":80,"cacheReadInputTokens":300,"cacheCreationInputTokens":0}}}`

// TestCLIClaudeCodeRunsGuarded: the claude-code provider runs claude -p with no tools, no
// MCP servers, none of the user's hooks and no session on disk, with MEMNODE_DISABLED=1 in
// its environment, in the memnode-compressor directory, the prompt on stdin; the answer
// and the tokens come from its JSON.
func TestCLIClaudeCodeRunsGuarded(t *testing.T) {
	exe, dir := fakeCLI(t, "claude", "printf '%s\\n' '"+claudeOK+"'")
	c := newTestCLI(t, KindClaudeCode, exe)
	resp, err := c.Complete(context.Background(), Request{System: "SYSTEM PROMPT", Prompt: "the tool calls"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Text, "Fixed the greeting") || resp.Model != "claude-haiku-5-5" || resp.InputTokens != 1500 || resp.OutputTokens != 80 {
		t.Errorf("response = %+v, want the result text, modelUsage's model and its tokens (1500 in with cache reads, 80 out)", resp)
	}
	args := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "args"))), "\n")
	for _, want := range [][]string{{"-p"}, {"--output-format", "json"}, {"--model", "haiku"}, {"--system-prompt", "SYSTEM PROMPT"},
		{"--tools", ""}, {"--strict-mcp-config"}, {"--mcp-config", `{"mcpServers":{}}`}, {"--settings", `{"disableAllHooks":true}`},
		{"--no-session-persistence"}} {
		if !hasArgs(args, want) {
			t.Errorf("claude was run without %q: %q", want, args)
		}
	}
	if got := readFile(t, filepath.Join(dir, "stdin")); got != "the tool calls" {
		t.Errorf("stdin = %q, want the prompt", got)
	}
	env := readFile(t, filepath.Join(dir, "env"))
	if !strings.Contains(env, "\n"+DisabledEnv+"=1\n") || strings.Contains(env, DisabledEnv+"=0") {
		t.Errorf("the child's environment does not switch memnode's hooks off (MEMNODE_DISABLED=1 must win):\n%s", env)
	}
	if cwd := strings.TrimSpace(readFile(t, filepath.Join(dir, "cwd"))); filepath.Base(cwd) != memory.CompressorProject {
		t.Errorf("the child ran in %s, want a directory named %s", cwd, memory.CompressorProject)
	}
	if !(memory.Policy{}).ProjectExcluded(memory.CompressorProject) {
		t.Errorf("the policy records the compressor's project")
	}
}

// TestCLICodexAndGeminiGuarded: codex exec and gemini -p run with their no-hooks,
// no-MCP and read-only flags, the system prompt ahead of the prompt on stdin.
func TestCLICodexAndGeminiGuarded(t *testing.T) {
	for _, tc := range []struct {
		kind, out string
		flags     [][]string
		in, outT  int
	}{
		{KindCodex, `{"type":"thread.started","thread_id":"x"}
{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"<observation><title>Fixed the greeting</title></observation>"}}
{"type":"turn.completed","usage":{"input_tokens":5000,"cached_input_tokens":4000,"output_tokens":70}}`,
			[][]string{{"exec"}, {"--json"}, {"--ephemeral"}, {"--disable", "hooks"}, {"-c", "mcp_servers={}"}, {"--sandbox", "read-only"}, {"--disable", "shell_tool"}, {"--disable", "unified_exec"}, {"-"}}, 5000, 70},
		{KindGeminiCLI, `{"response":"<observation><title>Fixed the greeting</title></observation>","stats":{"models":{"gemini-2.5-flash-lite":{"tokens":{"prompt":3000,"candidates":60,"total":3100,"cached":0,"thoughts":0,"tool":0}}}}}`,
			[][]string{{"--output-format", "json"}, {"--extensions", "none"}, {"--allowed-mcp-server-names", "none"}, {"--approval-mode", "plan"}, {"--skip-trust"}, {"--policy"}}, 3000, 100},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			exe, dir := fakeCLI(t, tc.kind, "cat <<'EOF'\n"+tc.out+"\nEOF")
			c := newTestCLI(t, tc.kind, exe)
			resp, err := c.Complete(context.Background(), Request{System: "SYSTEM PROMPT", Prompt: "the tool calls"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(resp.Text, "Fixed the greeting") || resp.InputTokens != tc.in || resp.OutputTokens != tc.outT {
				t.Errorf("response = %+v, want the answer, %d in / %d out", resp, tc.in, tc.outT)
			}
			args := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "args"))), "\n")
			for _, want := range tc.flags {
				if !hasArgs(args, want) {
					t.Errorf("%s was run without %q: %q", tc.kind, want, args)
				}
			}
			if got := readFile(t, filepath.Join(dir, "stdin")); got != "SYSTEM PROMPT\n\nthe tool calls" {
				t.Errorf("stdin = %q", got)
			}
			if tc.kind == KindGeminiCLI {
				policy := filepath.Join(c.cfg.WorkDir, geminiPolicyFile)
				if !hasArgs(args, []string{"--policy", policy}) || !strings.Contains(readFile(t, policy), "toolName = \"*\"\ndecision = \"deny\"") {
					t.Errorf("gemini was not given a policy denying every tool: %q", args)
				}
			}
			if env := readFile(t, filepath.Join(dir, "env")); !strings.Contains(env, "\n"+DisabledEnv+"=1\n") {
				t.Errorf("no %s=1 in the child's environment", DisabledEnv)
			}
		})
	}
}

// TestCLIFailuresClassified: each CLI's real failure answers (Claude Code 2.1.332's JSON
// for a 401 and a 429, its usage-limit text, Codex's and Gemini CLI's) get the class the
// chain acts on; the message is a fixed phrase that never carries what the CLI printed.
func TestCLIFailuresClassified(t *testing.T) {
	reset := time.Now().Add(3 * time.Hour).Unix()
	for _, tc := range []struct {
		name, kind, body string
		class            Class
		retryAfter       time.Duration // minimum
	}{
		{"claude 401", KindClaudeCode, `echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"api_error_type":"authentication_error","result":"Invalid API key · Fix external API key"}'; exit 1`, AuthInvalid, 0},
		{"claude not logged in", KindClaudeCode, `echo '{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login"}'; exit 1`, AuthInvalid, 0},
		{"claude 429", KindClaudeCode, `echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error_type":"rate_limit_error","result":"API Error: Request rejected (429) · This request would exceed your account rate limit."}'; exit 1`, RateLimit, 5 * time.Minute},
		{"claude session limit", KindClaudeCode, `echo '{"type":"result","subtype":"success","is_error":true,"result":"You'"'"'ve hit your session limit · resets 3pm"}'; exit 1`, RateLimit, 50 * time.Minute},
		{"claude usage limit epoch", KindClaudeCode, `echo '{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|` + strconv.FormatInt(reset, 10) + `"}'; exit 1`, RateLimit, 2 * time.Hour},
		{"claude overloaded", KindClaudeCode, `echo '{"type":"result","is_error":true,"api_error_status":529,"result":"API Error: 529 overloaded"}'; exit 1`, Transient, 0},
		{"claude garbage", KindClaudeCode, `echo 'not json at all'; exit 0`, Unrecoverable, 0},
		{"codex usage limit", KindCodex, `echo '{"type":"error","message":"You'"'"'ve hit your usage limit. Upgrade to Pro or try again later."}'; echo '{"type":"turn.failed","error":{"message":"usage limit"}}'; exit 1`, RateLimit, 50 * time.Minute},
		{"codex 401", KindCodex, `echo '{"type":"error","message":"unexpected status 401 Unauthorized: Missing bearer"}'; exit 1`, AuthInvalid, 0},
		{"gemini quota", KindGeminiCLI, `echo '{"error":{"type":"Error","message":"You have exhausted your daily quota on this model.","code":429}}'; exit 1`, RateLimit, 50 * time.Minute},
		{"gemini auth", KindGeminiCLI, `echo 'Please set an Auth method in your settings.json' >&2; exit 41`, AuthInvalid, 0},
		{"stderr echo", KindClaudeCode, `cat "$0.dir/stdin" >&2; echo "the prompt was PRIVATE-PROMPT-TEXT" >&2; exit 3`, Unrecoverable, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exe, dir := fakeCLI(t, "cli", tc.body)
			os.Symlink(dir, exe+".dir")
			c := newTestCLI(t, tc.kind, exe)
			_, err := c.Complete(context.Background(), Request{System: "S", Prompt: "PRIVATE-PROMPT-TEXT"})
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if pe.Class != tc.class || pe.RetryAfter < tc.retryAfter {
				t.Errorf("class %s retry after %s, want %s and at least %s (%v)", pe.Class, pe.RetryAfter, tc.class, tc.retryAfter, err)
			}
			if strings.Contains(err.Error(), "PRIVATE-PROMPT-TEXT") || strings.Contains(err.Error(), "Upgrade to Pro") {
				t.Errorf("the error carries what the CLI printed: %v", err)
			}
		})
	}
}

// TestCLIUsageLimitDisablesForCooldown: in a chain, a usage-limit answer disables the agent
// CLI for the cool-down and the offline compressor takes over; the next request does not
// run the CLI.
func TestCLIUsageLimitDisablesForCooldown(t *testing.T) {
	exe, dir := fakeCLI(t, "claude", `echo x >> "$0.dir/runs"; echo '{"type":"result","is_error":true,"result":"You'"'"'ve hit your limit · resets 5pm"}'; exit 1`)
	os.Symlink(dir, exe+".dir")
	p := newTestCLI(t, KindClaudeCode, exe)
	comp, err := NewCompressor(CompressorConfig{Provider: p, Estimate: p.Estimate})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	ch, err := NewChain(ChainConfig{Compressors: []*Compressor{comp}, Fallback: offline.New(), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	call := []ai.ToolCall{{SessionID: "s", Project: "p", ToolName: "Bash", ToolInput: []byte(`{"command":"make"}`), ToolResponse: []byte(`{"stdout":"ok"}`)}}
	for range 2 {
		if obs, _, err := ch.Observe(context.Background(), call); err != nil || len(obs) != 1 {
			t.Fatalf("observe = %v, %v: want the offline compressor's observation", obs, err)
		}
	}
	if runs := strings.Count(readFile(t, filepath.Join(dir, "runs")), "x"); runs != 1 {
		t.Errorf("the CLI ran %d times; after a usage-limit answer it must be left alone", runs)
	}
	st := ch.Stats()[0]
	if want := now.Add(DefaultCLICooldown); !st.DisabledUntil.Equal(want) || st.CLI != exe {
		t.Errorf("stats = %+v, want disabled until %s and the CLI's path", st, want)
	}
}

// TestCLINotFound: a CLI that is not installed is skipped like a provider without a key,
// and status says so.
func TestCLINotFound(t *testing.T) {
	c := newTestCLI(t, KindClaudeCode, filepath.Join(t.TempDir(), "no-such-claude"))
	_, err := c.Complete(context.Background(), Request{Prompt: "x"})
	if ClassOf(err) != AuthInvalid || !strings.Contains(err.Error(), "not found") {
		t.Errorf("err = %v, want auth_invalid 'not found'", err)
	}
	if got := c.Executable(); !strings.HasPrefix(got, "not found: ") {
		t.Errorf("Executable = %q", got)
	}
	if _, err := NewCLI(CLIConfig{Kind: KindClaudeCode, WorkDir: t.TempDir()}); !errors.Is(err, ErrBadWorkDir) {
		t.Errorf("a work dir memnode would record was accepted: %v", err)
	}
}

// TestCLIOutputBoundedAndUsageEstimated: output over the cap is refused; an answer without
// usage is charged conservatively (every byte a token plus the CLI's overhead).
func TestCLIOutputBoundedAndUsageEstimated(t *testing.T) {
	exe, _ := fakeCLI(t, "claude", `head -c 300000 /dev/zero | tr '\0' 'a'`)
	c, err := NewCLI(CLIConfig{Kind: KindClaudeCode, Path: exe, WorkDir: filepath.Join(t.TempDir(), memory.CompressorProject), MaxStdoutBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Complete(context.Background(), Request{Prompt: "x"}); ClassOf(err) != Unrecoverable || !strings.Contains(err.Error(), "over 1000 bytes") {
		t.Errorf("err = %v, want the output cap", err)
	}
	exe2, _ := fakeCLI(t, "claude", `echo '{"type":"result","subtype":"success","is_error":false,"result":"<observation><title>t</title></observation>"}'`)
	c2 := newTestCLI(t, KindClaudeCode, exe2)
	req := Request{System: "system", Prompt: strings.Repeat("p", 5000)}
	resp, err := c2.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if int64(resp.InputTokens) != c2.Estimate(req.System, req.Prompt) || resp.OutputTokens < len(resp.Text) {
		t.Errorf("unreported usage charged %d in / %d out, want the estimate %d and ≥ %d", resp.InputTokens, resp.OutputTokens, c2.Estimate(req.System, req.Prompt), len(resp.Text))
	}
}

// TestCLICloseKillsProcessGroup: Close kills a running CLI and the helper it started, and
// returns once they are gone; Complete after Close refuses.
func TestCLICloseKillsProcessGroup(t *testing.T) {
	exe, dir := fakeCLI(t, "claude", `sleep 300 & echo $! > "$0.dir/child"; wait`)
	os.Symlink(dir, exe+".dir")
	c := newTestCLI(t, KindClaudeCode, exe)
	done := make(chan error, 1)
	go func() {
		_, err := c.Complete(context.Background(), Request{Prompt: "x"})
		done <- err
	}()
	childFile := filepath.Join(dir, "child")
	testkit.WaitFor(t, "the CLI to start its helper", 30*time.Second, func() bool {
		b, err := os.ReadFile(childFile)
		return err == nil && len(strings.TrimSpace(string(b))) > 0
	})
	pid, _ := strconv.Atoi(strings.TrimSpace(readFile(t, childFile)))
	c.Close()
	select { // Close has waited for the child; the deadline only bounds a broken Close
	case err := <-done:
		if !errors.Is(err, ErrCLIClosed) {
			t.Errorf("Complete during Close = %v, want ErrCLIClosed", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the running Complete did not end with Close")
	}
	testkit.WaitFor(t, "the CLI's helper to be killed", 30*time.Second, func() bool { return !alive(pid) })
	if _, err := c.Complete(context.Background(), Request{Prompt: "x"}); !errors.Is(err, ErrCLIClosed) {
		t.Errorf("Complete after Close = %v", err)
	}
}

// alive reports whether pid runs (a zombie waiting for its reaper is not running).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return runtime.GOOS != "linux"
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestCLIBudgetStopsAtN: with a daily budget of N tokens, the agent CLI runs while its
// reservation fits and stops before N would be passed; the day's settled usage never
// exceeds N, and the offline compressor takes the rest.
func TestCLIBudgetStopsAtN(t *testing.T) {
	const n = 20000
	exe, dir := fakeCLI(t, "claude", `echo x >> "$0.dir/runs"; printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"result":"<observation><title>t</title></observation>","modelUsage":{"m":{"inputTokens":4000,"outputTokens":500}}}'`)
	os.Symlink(dir, exe+".dir")
	p := newTestCLI(t, KindClaudeCode, exe)
	budget := NewBudget(n, nil, nil)
	comp, err := NewCompressor(CompressorConfig{Provider: p, Estimate: p.Estimate, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := NewChain(ChainConfig{Compressors: []*Compressor{comp}, Fallback: offline.New(), Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	call := []ai.ToolCall{{SessionID: "s", Project: "p", ToolName: "Bash", ToolInput: []byte(`{"command":"make"}`), ToolResponse: []byte(`{"stdout":"ok"}`)}}
	for range 10 {
		if _, _, err := ch.Observe(context.Background(), call); err != nil {
			t.Fatal(err)
		}
	}
	runs := strings.Count(readFile(t, filepath.Join(dir, "runs")), "x")
	used, _ := budget.Used(context.Background())
	if used != int64(runs)*4500 || used > n || runs == 0 || runs == 10 {
		t.Fatalf("%d runs, %d tokens used of %d: want some runs, then the offline compressor, never past the budget", runs, used, n)
	}
	// It stopped because the next reservation would pass N, not earlier.
	req := Request{System: systemPrompt, Prompt: observationPrompt(call, DefaultMaxCallBytes)}
	if next := used + p.Estimate(req.System, req.Prompt) + DefaultMaxOutputTokens; next <= n {
		t.Errorf("stopped at %d used although the next request (%d) fits in %d", used, next, n)
	}
	if ch.BudgetUsed() != used || ch.BudgetLimit() != n {
		t.Errorf("chain reports %d used of %d", ch.BudgetUsed(), ch.BudgetLimit())
	}
}

package agentcli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// NewHome makes an empty home directory for one agent session (symlinks resolved, so paths
// the agent reports compare equal to it).
func NewHome(tb testing.TB) string {
	tb.Helper()
	return realDir(tb, tb.TempDir())
}

// droppedEnv are the prefixes of variables a child agent must not inherit: the user's home
// and XDG dirs, memnode's own settings, and every provider's credentials and endpoints.
var droppedEnv = []string{
	"HOME=", "XDG_", "MEMNODE_", "CLAUDE", "ANTHROPIC_", "OPENAI_", "CODEX_", "COPILOT_", "GH_", "GITHUB_",
	"GEMINI_", "GOOGLE_", "QWEN_", "OPENCODE", "AWS_", "AZURE_", "DASHSCOPE_",
}

// Env is the environment for an agent running in home: the test process's environment
// without droppedEnv's variables, with HOME and the XDG dirs inside home, then extra
// ("KEY=value" entries; later ones win).
func Env(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		drop := false
		for _, p := range droppedEnv {
			if strings.HasPrefix(kv, p) {
				drop = true
				break
			}
		}
		if !drop {
			env = append(env, kv)
		}
	}
	env = append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME="+filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
	)
	return append(env, extra...)
}

// GitProject makes a git repository holding files (slash paths → contents), all committed
// on branch main, and returns its directory (symlinks resolved).
func GitProject(tb testing.TB, files map[string]string) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		Need(tb, "a git project needs git (apt-get install git): %v", err)
	}
	dir := realDir(tb, tb.TempDir())
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[name]), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	git := func(args ...string) {
		tb.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(Env(dir), "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=memnode test", "GIT_AUTHOR_EMAIL=test@example.invalid",
			"GIT_COMMITTER_NAME=memnode test", "GIT_COMMITTER_EMAIL=test@example.invalid")
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-q", "-m", "initial")
	return dir
}

func realDir(tb testing.TB, dir string) string {
	tb.Helper()
	d, err := filepath.EvalSymlinks(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// Output is what a finished CLI run printed.
type Output struct {
	Stdout, Stderr string
	// Code is the exit code (-1 when the process was killed at the deadline).
	Code int
}

// Run runs cmd with stdin empty, waits at most timeout, and afterwards kills every process
// left in its process group (MCP servers, hooks). Only a failure to start fails the test;
// the caller judges Code.
func Run(tb testing.TB, timeout time.Duration, cmd *exec.Cmd) Output {
	tb.Helper()
	var out, errb bytes.Buffer
	cmd.Stdin = bytes.NewReader(nil)
	cmd.Stdout, cmd.Stderr = &out, &errb
	setProcessGroup(cmd)
	// A child that outlives the agent (an MCP server) keeps the output pipes open: stop
	// waiting for them a moment after the agent exits; killGroup then ends the child.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", cmd.Path, err)
	}
	pid := cmd.Process.Pid
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var err error
	timedOut := false
	select {
	case err = <-waited:
	case <-ctx.Done():
		timedOut = true
		killGroup(pid)
		err = <-waited
	}
	killGroup(pid)
	o := Output{Stdout: out.String(), Stderr: errb.String()}
	switch {
	case timedOut:
		o.Code = -1
		tb.Logf("%s did not finish within %s: killed", filepath.Base(cmd.Path), timeout)
	case cmd.ProcessState != nil:
		o.Code = cmd.ProcessState.ExitCode() // also when a child kept the output open (ErrWaitDelay)
	case err != nil:
		tb.Fatalf("run %s: %v", cmd.Path, err)
	}
	return o
}

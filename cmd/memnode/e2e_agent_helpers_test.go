package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// Helpers of the real agent CLI tests (e2e_*cli_test.go, e2e_geminicli, e2e_qwencode,
// e2e_opencode): the shared session story and its assertions, and agentRig, one agent's
// surroundings.
//
// The real-agent tests (Gemini CLI, Qwen Code, OpenCode) share one story: session 1 reads
// app.js, fixes its typo, runs a failing and a passing command (node: CI has it, unlike
// python); memnode records it; session 2 starts with memnode's context about it and calls
// memnode's MCP search.

// plantedSecret is in session 1's prompt inside <private>: it must never reach the data dir.
const plantedSecret = "SECRET-hunter2"

const agentPrompt1 = "The greeting in app.js has a typo. Fix it and run the tests. <private>staging password is " + plantedSecret + "</private>"

const agentPrompt2 = "What did we change in this project last time?"

// Session 1's steps, the same for every agent.
const (
	agentFile    = "app.js"
	agentOld     = `"Helo, "`
	agentNew     = `"Hello, "`
	agentFailCmd = `node -e "require('./test_greeting')"` // exits 1: no such module
	agentPassCmd = "node test_app.js"
	agentAnswer1 = `Fixed the typo in greet(): it now returns "Hello, <name>", and node test_app.js passes.`
	agentAnswer2 = `Last time we fixed the typo in greet() in app.js ("Helo" -> "Hello"); the test passes.`
)

// agentFiles are the files of the project the sessions work in.
func agentFiles(t *testing.T) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		agentcli.Need(t, "the agent sessions run node commands (install Node.js): %v", err)
	}
	return map[string]string{
		agentFile:     "function greet(name) {\n  return \"Helo, \" + name;\n}\n\nmodule.exports = { greet };\n",
		"test_app.js": "const { greet } = require(\"./app\");\n\nif (greet(\"world\") !== \"Hello, world\") {\n  console.error(\"FAIL: \" + greet(\"world\"));\n  process.exit(1);\n}\nconsole.log(\"1 passed\");\n",
	}
}

// longAgentFiles are agentFiles with app.js over the file-context size gate (hooks: 1,500
// bytes), so that a session's re-read gets memnode's history of it.
func longAgentFiles(t *testing.T) map[string]string {
	t.Helper()
	files := agentFiles(t)
	files[agentFile] = strings.Repeat("// Greeting helpers for the demo app; kept long on purpose.\n", 30) + files[agentFile]
	return files
}

// agentProject is the temp git project the sessions work in (longAgentFiles).
func agentProject(t *testing.T) string {
	t.Helper()
	return agentcli.GitProject(t, longAgentFiles(t))
}

// agentEnv is the environment an agent runs in: an isolated home, and the instance's memnode
// settings (its hooks and `memnode mcp` inherit them).
func (in *instance) agentEnv(home string, extra ...string) []string {
	env := agentcli.Env(home, "MEMNODE_DATA_DIR="+in.dataDir, "MEMNODE_PORT="+strconv.Itoa(in.port),
		"MEMNODE_SYNC_PORT=-1", "MEMNODE_GOSSIP_PORT=-1")
	return append(env, extra...)
}

// requestText is every string in a JSON request body, joined: what the model was shown,
// unescaped.
func requestText(r agentcli.Request) string {
	var v any
	if json.Unmarshal(r.Body, &v) != nil {
		return string(r.Body)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
			b.WriteByte('\n')
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// recordedSession1 waits until the node has recorded session 1 of project: the read, the
// edit, the failing and the passing command, and returns the observation titles.
func (in *instance) recordedSession1(t *testing.T, project string) []string {
	t.Helper()
	db := in.db()
	testkit.WaitForState(t, "session 1's tool calls are observations", 60*time.Second, func() (bool, string) {
		n := in.count(db, "SELECT COUNT(*) FROM observations WHERE project = ?", project)
		return n >= 4, strconv.Itoa(n) + " observations"
	})
	rows, err := db.Query("SELECT title || ' ' || subtitle || ' ' || narrative || ' ' || facts FROM observations WHERE project = ? ORDER BY created_at, rowid", project)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var titles []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		titles = append(titles, s)
	}
	all := strings.Join(titles, "\n")
	for _, want := range []string{agentFile, "exit 1"} {
		if !strings.Contains(all, want) {
			t.Errorf("no observation mentions %q:\n%s", want, all)
		}
	}
	return titles
}

// assertSessionContext: session 2's first model request carries memnode's context, which
// names the MCP search tool as the agent shows it (searchTool) and session 1's edit (from
// recordedSession1's titles).
func assertSessionContext(t *testing.T, first, searchTool string, titles []string) {
	t.Helper()
	if !strings.Contains(first, "memnode-context") || !strings.Contains(first, searchTool) {
		t.Errorf("session 2's first request has no memnode context naming its tools:\n%.3000s", first)
	}
	edit := ""
	for _, title := range titles {
		if strings.HasPrefix(title, "Edit "+agentFile) {
			edit, _, _ = strings.Cut(title, ":")
		}
	}
	if edit == "" || !strings.Contains(first, edit) {
		t.Errorf("session 2's context does not name session 1's edit (%q):\n%.3000s", edit, first)
	}
}

// assertRestored: a config file has exactly the bytes it had before install.
func assertRestored(t *testing.T, path string, orig []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	switch {
	case orig == nil && os.IsNotExist(err):
	case err != nil:
		t.Errorf("%s after uninstall: %v", path, err)
	case string(b) != string(orig):
		t.Errorf("%s is not restored after uninstall:\n%s\nwant\n%s", path, b, orig)
	}
	if _, err := os.Stat(path + ".memnode-backup"); !os.IsNotExist(err) {
		t.Errorf("backup of %s left behind", filepath.Base(path))
	}
}

// agentRig is one real agent CLI session's surroundings: a memnode instance (its own data
// dir, port and node), an isolated HOME the agent and `memnode install` share, a temp git
// project and a fake model server.
type agentRig struct {
	*instance
	home    string
	project string
	model   *agentcli.Server
	// agentEnv are variables only the agent's processes get (provider URL, keys, flags).
	agentEnv []string
	// path, when set, is the agent's whole PATH (the npm test's: no Go, no C compiler);
	// otherwise memnodeBin's directory comes first in the test's PATH.
	path string
}

// newAgentRig makes the surroundings for one agent's sessions in a project of files, with
// a fake model server speaking wire, answering from script.
func newAgentRig(t *testing.T, files map[string]string, wire agentcli.Wire, script agentcli.Script) *agentRig {
	t.Helper()
	in := newInstance(t)
	home := agentcli.NewHome(t)
	in.extra = append(in.extra, "HOME="+home) // memnode install edits the agent's files in this HOME
	t.Cleanup(func() {
		// An agent that starts `memnode mcp` without passing on MEMNODE_DATA_DIR makes it
		// start a second node in the default data dir of the isolated HOME.
		stray := &instance{tb: t, dataDir: filepath.Join(home, ".memnode")}
		if pid := stray.pidFile(); pid > 0 {
			stray.kill()
			t.Errorf("a memnode node (pid %d) ran in %s: the agent's MCP config does not pass MEMNODE_DATA_DIR on", pid, stray.dataDir)
		}
	})
	return &agentRig{
		instance: in,
		home:     home,
		project:  agentcli.GitProject(t, files),
		model:    agentcli.NewServer(t, wire, script),
	}
}

// env is the agent process's environment: agentEnv's, memnode's binaries first in PATH,
// then the rig's agentEnv and extra.
func (r *agentRig) env(extra ...string) []string {
	path := filepath.Dir(memnodeBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	if r.path != "" {
		path = r.path
	}
	env := r.instance.agentEnv(r.home, "PATH="+path)
	env = append(env, r.agentEnv...)
	return append(env, extra...)
}

// runAgent runs the agent binary bin with args in the project, and fails the test when it
// does not exit 0 within a minute.
func (r *agentRig) runAgent(bin string, args ...string) agentcli.Output {
	r.tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.project
	cmd.Env = r.env()
	o := agentcli.Run(r.tb, time.Minute, cmd)
	if o.Code != 0 {
		r.tb.Fatalf("%s %s: exit %d\nstdout: %s\nstderr: %s", filepath.Base(bin), strings.Join(args, " "), o.Code, o.Stdout, o.Stderr)
	}
	return o
}

// turns are the model requests that offered tools: the ones the scripted turns answer
// (an agent's side requests — titles, summaries — offer none).
func (r *agentRig) turns() []agentcli.Request {
	var out []agentcli.Request
	for _, req := range r.model.ModelRequests() {
		if len(req.Tools) > 0 {
			out = append(out, req)
		}
	}
	return out
}

// readFile reads path, failing the test when it cannot.
func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// observationTexts are the recorded observations, one line each (tool, title, narrative,
// facts, files), in order.
func (r *agentRig) observationTexts() []string {
	r.tb.Helper()
	rows, err := r.db().Query(`SELECT tool_name || ' | ' || title || ' | ' || narrative || ' | ' || facts || ' | ' || files_read || ' | ' || files_modified FROM observations ORDER BY created_at, rowid`)
	if err != nil {
		r.tb.Fatalf("query observations: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			r.tb.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// countedHooks gives the instance a memnode of its own whose lean hook binary is a wrapper
// that logs each run's arguments ("hook codex observation") before it runs the real one:
// `bin install <agent>` writes hooks that count the hook processes the agent starts. runs
// reads the log.
func (in *instance) countedHooks() (bin string, runs func() []string) {
	in.tb.Helper()
	dir := in.tb.TempDir()
	bin = filepath.Join(dir, "memnode")
	if err := os.Link(memnodeBin, bin); err != nil {
		b, err := os.ReadFile(memnodeBin)
		if err == nil {
			err = os.WriteFile(bin, b, 0o755)
		}
		if err != nil {
			in.tb.Fatalf("copy memnode: %v", err)
		}
	}
	log := filepath.Join(dir, "hook-runs.log")
	lean := filepath.Join(filepath.Dir(memnodeBin), "memnode-hook")
	script := "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" + lean + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "memnode-hook"), []byte(script), 0o755); err != nil {
		in.tb.Fatal(err)
	}
	return bin, func() []string {
		b, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			in.tb.Fatal(err)
		}
		return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
	}
}

// assertOneHookPerCall checks, for an agent whose one observation hook answers with file
// context, that its hooks so far (runs, from countedHooks) started observation processes, one
// per tool call, and no file-context process.
func assertOneHookPerCall(t *testing.T, runs func() []string, observation int) {
	t.Helper()
	if n := hookRunsOf(runs()); n["observation"] != observation || n["file-context"] != 0 {
		t.Errorf("hooks ran %v, want %d observation and no file-context", n, observation)
	}
}

// fileContexts counts memnode's file contexts of agentFile in a model request.
func fileContexts(r agentcli.Request) int {
	return strings.Count(requestText(r), "memnode: "+agentFile+" has")
}

// assertNoFileContext checks that no request of a session in an empty project had file
// context.
func assertNoFileContext(t *testing.T, reqs []agentcli.Request) {
	t.Helper()
	for i, r := range reqs {
		if fileContexts(r) != 0 {
			t.Errorf("request %d has file context: the project was empty", i)
		}
	}
}

// hookRunsOf counts runs (from countedHooks) per memnode event.
func hookRunsOf(runs []string) map[string]int {
	n := map[string]int{}
	for _, r := range runs {
		parts := strings.Split(r, "_")
		n[parts[len(parts)-1]]++
	}
	return n
}

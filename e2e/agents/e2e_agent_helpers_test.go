package agents

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/agentcli"
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

// agentFiles are the files of the project the sessions work in.
func agentFiles(t *testing.T) map[string]string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		agentcli.Need(t, "the agent sessions run node commands (install Node.js): %v", err)
	}
	return map[string]string{
		e2ekit.AgentFile: "function greet(name) {\n  return \"Helo, \" + name;\n}\n\nmodule.exports = { greet };\n",
		"test_app.js":    "const { greet } = require(\"./app\");\n\nif (greet(\"world\") !== \"Hello, world\") {\n  console.error(\"FAIL: \" + greet(\"world\"));\n  process.exit(1);\n}\nconsole.log(\"1 passed\");\n",
	}
}

// longAgentFiles are agentFiles with app.js over the file-context size gate (hooks: 1,500
// bytes), so that a session's re-read gets memnode's history of it.
func longAgentFiles(t *testing.T) map[string]string {
	t.Helper()
	files := agentFiles(t)
	files[e2ekit.AgentFile] = strings.Repeat("// Greeting helpers for the demo app; kept long on purpose.\n", 30) + files[e2ekit.AgentFile]
	return files
}

// agentProject is the temp git project the sessions work in (longAgentFiles).
func agentProject(t *testing.T) string {
	t.Helper()
	return agentcli.GitProject(t, longAgentFiles(t))
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
		if strings.HasPrefix(title, "Edit "+e2ekit.AgentFile) {
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
	*e2ekit.Instance
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
	in := e2ekit.NewInstance(t)
	home := agentcli.NewHome(t)
	in.Extra = append(in.Extra, "HOME="+home) // memnode install edits the agent's files in this HOME
	t.Cleanup(func() {
		// An agent that starts `memnode mcp` without passing on MEMNODE_DATA_DIR makes it
		// start a second node in the default data dir of the isolated HOME.
		stray := &e2ekit.Instance{Tb: t, DataDir: filepath.Join(home, ".memnode")}
		if pid := stray.PidFile(); pid > 0 {
			stray.Kill()
			t.Errorf("a memnode node (pid %d) ran in %s: the agent's MCP config does not pass MEMNODE_DATA_DIR on", pid, stray.DataDir)
		}
	})
	return &agentRig{
		Instance: in,
		home:     home,
		project:  agentcli.GitProject(t, files),
		model:    agentcli.NewServer(t, wire, script),
	}
}

// env is the agent process's environment: agentEnv's, memnode's binaries first in PATH,
// then the rig's agentEnv and extra.
func (r *agentRig) env(extra ...string) []string {
	path := filepath.Dir(e2ekit.MemnodeBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	if r.path != "" {
		path = r.path
	}
	env := r.Instance.AgentEnv(r.home, "PATH="+path)
	env = append(env, r.agentEnv...)
	return append(env, extra...)
}

// runAgent runs the agent binary bin with args in the project, and fails the test when it
// does not exit 0 within a minute.
func (r *agentRig) runAgent(bin string, args ...string) agentcli.Output {
	r.Tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = r.project
	cmd.Env = r.env()
	o := runCLI(r.Tb, time.Minute, cmd)
	if o.Code != 0 {
		r.Tb.Fatalf("%s %s: exit %d\nstdout: %s\nstderr: %s", filepath.Base(bin), strings.Join(args, " "), o.Code, o.Stdout, o.Stderr)
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

// observationTexts are the recorded observations, one line each (tool, title, narrative,
// facts, files), in order.
func (r *agentRig) observationTexts() []string {
	r.Tb.Helper()
	rows, err := r.Db().Query(`SELECT tool_name || ' | ' || title || ' | ' || narrative || ' | ' || facts || ' | ' || files_read || ' | ' || files_modified FROM observations ORDER BY created_at, rowid`)
	if err != nil {
		r.Tb.Fatalf("query observations: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			r.Tb.Fatal(err)
		}
		out = append(out, s)
	}
	return out
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
	return strings.Count(requestText(r), "memnode: "+e2ekit.AgentFile+" has")
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

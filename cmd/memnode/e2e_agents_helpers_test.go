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

// agentProject is the temp git project the sessions work in.
func agentProject(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		agentcli.Need(t, "the agent sessions run node commands (install Node.js): %v", err)
	}
	return agentcli.GitProject(t, map[string]string{
		agentFile:     "function greet(name) {\n  return \"Helo, \" + name;\n}\n\nmodule.exports = { greet };\n",
		"test_app.js": "const { greet } = require(\"./app\");\n\nif (greet(\"world\") !== \"Hello, world\") {\n  console.error(\"FAIL: \" + greet(\"world\"));\n  process.exit(1);\n}\nconsole.log(\"1 passed\");\n",
	})
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

// assertNoSecret: nothing below the data dir holds the planted secret.
func (in *instance) assertNoSecret(t *testing.T) {
	t.Helper()
	if hits := testkit.FilesContaining(t, in.dataDir, plantedSecret); len(hits) > 0 {
		t.Errorf("the private secret reached the data dir: %v", hits)
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

package e2ekit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// Session 1's steps, the same for every agent.
const (
	AgentFile    = "app.js"
	AgentOld     = `"Helo, "`
	AgentNew     = `"Hello, "`
	AgentFailCmd = `node -e "require('./test_greeting')"` // exits 1: no such module
	AgentPassCmd = "node test_app.js"
	AgentAnswer1 = `Fixed the typo in greet(): it now returns "Hello, <name>", and node test_app.js passes.`
	AgentAnswer2 = `Last time we fixed the typo in greet() in app.js ("Helo" -> "Hello"); the test passes.`
)

// AgentEnv is the environment an agent runs in: an isolated home, and the instance's memnode
// settings (its hooks and `memnode mcp` inherit them).
func (in *Instance) AgentEnv(home string, extra ...string) []string {
	env := agentcli.Env(home, "MEMNODE_DATA_DIR="+in.DataDir, "MEMNODE_PORT="+strconv.Itoa(in.Port),
		"MEMNODE_SYNC_PORT=-1", "MEMNODE_GOSSIP_PORT=-1")
	return append(env, extra...)
}

// RecordedSession1 waits until the node has recorded session 1 of project: the read, the
// edit, the failing and the passing command, and returns the observation titles.
func (in *Instance) RecordedSession1(t *testing.T, project string) []string {
	t.Helper()
	db := in.Db()
	testkit.WaitForState(t, "session 1's tool calls are observations", 60*time.Second, func() (bool, string) {
		n := in.Count(db, "SELECT COUNT(*) FROM observations WHERE project = ?", project)
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
	for _, want := range []string{AgentFile, "exit 1"} {
		if !strings.Contains(all, want) {
			t.Errorf("no observation mentions %q:\n%s", want, all)
		}
	}
	return titles
}

// ReadFile reads path, failing the test when it cannot.
func ReadFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// CountedHooks gives the instance a memnode of its own whose lean hook binary is a wrapper
// that logs each run's arguments ("hook codex observation") before it runs the real one:
// `bin install <agent>` writes hooks that count the hook processes the agent starts. runs
// reads the log.
func (in *Instance) CountedHooks() (bin string, runs func() []string) {
	in.Tb.Helper()
	dir := in.Tb.TempDir()
	bin = filepath.Join(dir, "memnode")
	if err := os.Link(MemnodeBin, bin); err != nil {
		b, err := os.ReadFile(MemnodeBin)
		if err == nil {
			err = os.WriteFile(bin, b, 0o755)
		}
		if err != nil {
			in.Tb.Fatalf("copy memnode: %v", err)
		}
	}
	log := filepath.Join(dir, "hook-runs.log")
	lean := filepath.Join(filepath.Dir(MemnodeBin), "memnode-hook")
	script := "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" + lean + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "memnode-hook"), []byte(script), 0o755); err != nil {
		in.Tb.Fatal(err)
	}
	return bin, func() []string {
		b, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			in.Tb.Fatal(err)
		}
		return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/agentcli"
)

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

// env is the agent process's environment: isolated HOME, memnode's data dir and port (the
// hooks and `memnode mcp` the agent starts inherit them), memnode's binaries first in PATH.
func (r *agentRig) env(extra ...string) []string {
	path := filepath.Dir(memnodeBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	env := agentcli.Env(r.home, "PATH="+path, "MEMNODE_DATA_DIR="+r.dataDir, "MEMNODE_PORT="+strconv.Itoa(r.port),
		"MEMNODE_SYNC_PORT=-1", "MEMNODE_GOSSIP_PORT=-1")
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

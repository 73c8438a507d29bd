package e2ekit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/api/apitype"
)

// NodeCounters is what a hook that sent something would move: the node's ingest counter,
// the stored records, the node's log and the data dir's spool and hook log.
type NodeCounters struct {
	Ingested     int64
	Observations int
	Prompts      int
	Sessions     int
	NodeLog      string
	Spool        int
	HookLog      string
}

func (c NodeCounters) String() string {
	return fmt.Sprintf("ingested %d, %d observations, %d prompts, %d sessions, node log %d bytes, %d spooled, hook log %q",
		c.Ingested, c.Observations, c.Prompts, c.Sessions, len(c.NodeLog), c.Spool, c.HookLog)
}

func (in *Instance) Counters(t *testing.T) NodeCounters {
	t.Helper()
	var st struct {
		Status apitype.Status `json:"status"`
	}
	if err := json.Unmarshal([]byte(in.MustRun(nil, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	spool, _ := os.ReadDir(filepath.Join(in.DataDir, "spool"))
	nodeLog, _ := os.ReadFile(filepath.Join(in.DataDir, "logs", "memnode.log"))
	hookLog, _ := os.ReadFile(filepath.Join(in.DataDir, "logs", "hook.log"))
	r := st.Status.Records
	return NodeCounters{Ingested: st.Status.Queue.Ingested, Observations: r.Observations, Prompts: r.Prompts, Sessions: r.Sessions,
		NodeLog: string(nodeLog), Spool: len(spool), HookLog: string(hookLog)}
}

func GitDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

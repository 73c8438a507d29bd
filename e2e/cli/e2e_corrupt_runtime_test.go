package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/testkit"
)

// corruptUnderNode damages memnode.db while the node runs: the WAL is checkpointed into the
// file (so every page is read from it), the root page of every table and index is
// overwritten with bytes no b-tree page starts with, and a small schema change through
// another connection moves the WAL on, so the node's connections drop their page caches at
// their next read.
func corruptUnderNode(t *testing.T, in *e2ekit.Instance) {
	t.Helper()
	path := datadir.Dir(in.DataDir).DB()
	db, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	testkit.WaitFor(t, "the WAL to be checkpointed into memnode.db", 20*time.Second, func() bool {
		var busy, log, done int
		err := db.QueryRow("PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done)
		return err == nil && busy == 0
	})
	var pageSize int64
	if err := db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT rootpage FROM sqlite_master WHERE rootpage > 1")
	if err != nil {
		t.Fatal(err)
	}
	var roots []int64
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, p)
	}
	rows.Close()
	if len(roots) < 5 {
		t.Fatalf("only %d b-trees in memnode.db", len(roots))
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	junk := []byte(strings.Repeat("\xff", int(pageSize)))
	for _, p := range roots {
		if _, err := f.WriteAt(junk, (p-1)*pageSize); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE e2e_touch(x)"); err != nil {
		t.Fatal(err)
	}
}

// TestCorruptWhileRunning (issue 11): a database that turns corrupt under a running node is
// reported — status names the corruption and 'memnode repair', /health says not ready —
// and the node stops acknowledging events it cannot keep (hooks spool them instead).
func TestCorruptWhileRunning(t *testing.T) {
	in := e2ekit.NewInstance(t)
	in.Start()
	proj := filepath.Join(in.DataDir, "proj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	hook := func(i int) e2ekit.Result {
		payload := fmt.Sprintf(`{"session_id":"corrupt-run","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make target-%d"},"tool_response":{"stdout":"built target %d"}}`, proj, i, i)
		return in.Run([]byte(payload), "hook", "claude-code", "observation")
	}
	const before = 40
	for i := range before {
		if r := hook(i); r.Code != 0 {
			t.Fatalf("hook %d: exit %d: %s", i, r.Code, r.Stderr)
		}
	}
	db := in.Db()
	testkit.WaitFor(t, "the events to be stored", 30*time.Second, func() bool {
		return in.Queued() == 0 && in.Count(db, "SELECT COUNT(*) FROM observations") == before
	})
	db.Close()

	corruptUnderNode(t, in)

	// The next read finds the damage: status says so, for people and as JSON.
	human := in.Run(nil, "status")
	if human.Code != 0 {
		t.Fatalf("status: exit %d: %s", human.Code, human.Stderr)
	}
	for _, want := range []string{"not ready", "corrupt", "memnode repair"} {
		if !strings.Contains(human.Stdout, want) {
			t.Errorf("status does not say %q:\n%s", want, human.Stdout)
		}
	}
	var st struct {
		Ready  bool           `json:"ready"`
		Status apitype.Status `json:"status"`
	}
	if err := json.Unmarshal([]byte(in.MustRun(nil, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Ready || st.Status.Ready || st.Status.Storage.State != apitype.StorageCorrupt || !strings.Contains(st.Status.Storage.Message, "memnode repair") {
		t.Errorf("status --json: ready %v/%v, storage %+v", st.Ready, st.Status.Ready, st.Status.Storage)
	}

	// Writes are no longer acknowledged: the hook's event goes to the spool, nothing to the
	// node's queue.
	if r := hook(before); r.Code != 0 {
		t.Fatalf("hook on a corrupt node: exit %d: %s", r.Code, r.Stderr)
	}
	spooled, _ := filepath.Glob(filepath.Join(datadir.Dir(in.DataDir).Spool(), "*"))
	if len(spooled) == 0 {
		t.Error("the hook's event was neither spooled nor refused")
	}
	if q := in.Queued(); q != 0 {
		t.Errorf("the corrupt node queued %d events", q)
	}

	// `memnode start` against it names the cause instead of waiting for readiness.
	r := in.Run(nil, "start")
	if r.Code == 0 || !strings.Contains(r.Stderr, "corrupt") || !strings.Contains(r.Stderr, "memnode repair") {
		t.Errorf("start on a running corrupt node: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if r.Took > startDeadline {
		t.Errorf("start took %s to report the corrupt node", r.Took)
	}
}

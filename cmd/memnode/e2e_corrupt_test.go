package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/node"
	"github.com/memnode/memnode/replica"
)

// corruptInstance is an instance whose memnode.db existed and then lost its pages.
func corruptInstance(t *testing.T) *instance {
	t.Helper()
	in := newInstance(t)
	path := datadir.Dir(in.dataDir).DB()
	r, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: "e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	testkit.CorruptDB(t, path)
	return in
}

// checkCorruptLine checks a failed command's stderr ends with one "memnode: " line that
// names the corruption and the repair command.
func checkCorruptLine(t *testing.T, cmd string, r result) {
	t.Helper()
	checkFailLine(t, cmd, r, "corrupt", "memnode.db", "memnode repair")
}

// startDeadline is how long `memnode start`/`run` may take to give up on a corrupt
// database (the bound); the start timeout for a healthy node is longer.
const startDeadline = 10 * time.Second

func TestRunFailsOnACorruptDatabase(t *testing.T) {
	in := corruptInstance(t)
	r := in.run(nil, "run")
	if r.code != 1 {
		t.Errorf("run exit code = %d, want 1", r.code)
	}
	checkCorruptLine(t, "run", r)
	if node.Held(in.dataDir) {
		t.Fatal("the data dir is still locked")
	}
}

func TestStartFailsOnACorruptDatabase(t *testing.T) {
	in := corruptInstance(t)
	r := in.run(nil, "start")
	checkCorruptLine(t, "start", r)
	if node.Held(in.dataDir) {
		t.Fatal("a node still holds the data dir")
	}
}

// TestRepairThenStart: 'memnode repair' moves the damaged file aside and builds a new
// database from what reads; the node then starts on it.
func TestRepairThenStart(t *testing.T) {
	in := corruptInstance(t)
	r := in.run(nil, "repair")
	if r.code != 0 || !strings.Contains(r.stdout, "recovered") || !strings.Contains(r.stdout, ".corrupt-") {
		t.Fatalf("repair: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	damaged, _ := filepath.Glob(datadir.Dir(in.dataDir).DB() + ".corrupt-*")
	if len(damaged) == 0 {
		t.Fatal("the damaged file was not kept")
	}
	if r := in.run(nil, "repair"); r.code != 0 || !strings.Contains(r.stdout, "nothing to repair") {
		t.Fatalf("second repair: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := in.run(nil, "start"); r.code != 0 {
		t.Fatalf("start after repair: exit %d: %s", r.code, r.stderr)
	}
	if r := in.run(nil, "repair"); r.code == 0 || !strings.Contains(r.stderr, "memnode stop") {
		t.Fatalf("repair while the node runs: exit %d: %s", r.code, r.stderr)
	}
}

// TestBackgroundCheckFindsDeepDamage (issue 29): damage deep inside memnode.db (no root
// page, so the open's check does not read it) lets `memnode start` succeed at once; the
// full integrity check the node runs in the background after ready finds it, and the node
// then reports the corruption and the repair as for damage found by a read.
func TestBackgroundCheckFindsDeepDamage(t *testing.T) {
	in := newInstance(t)
	in.start()
	export := filepath.Join(t.TempDir(), "many.jsonl")
	writeObservations(t, export, 3000)
	in.mustRun(nil, "import", export)
	in.mustRun(nil, "stop")
	testkit.DamageDataPages(t, datadir.Dir(in.dataDir).DB(), 8)
	// The open's check passes: the node starts. On a database this small the background
	// check may finish before start's last poll, and start then names the corruption.
	if r := in.run(nil, "start"); r.code != 0 && !strings.Contains(r.stderr, "integrity check") {
		t.Fatalf("start: the open refused the damage it should leave to the background check: exit %d: %s", r.code, r.stderr)
	}
	if pid := in.pidFile(); pid > 0 {
		in.started = append(in.started, pid)
	}
	// Found by the background check, not by a read (nothing reads here but it).
	testkit.WaitFor(t, "the background check to find the damage", 60*time.Second, func() bool {
		log, _ := os.ReadFile(datadir.Dir(in.dataDir).NodeLog())
		return strings.Contains(string(log), "integrity check found the database corrupt")
	})
	var st struct {
		Status apitype.Status `json:"status"`
	}
	if err := json.Unmarshal([]byte(in.run(nil, "status", "--json").stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Status.Storage.State != apitype.StorageCorrupt || !strings.Contains(st.Status.Storage.Message, "memnode repair") {
		t.Fatalf("status after the check found the damage: %+v", st.Status.Storage)
	}
}

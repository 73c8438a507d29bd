package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
)

// corruptInstance is an instance whose memnode.db existed and then lost its pages.
func corruptInstance(t *testing.T) *e2ekit.Instance {
	t.Helper()
	in := e2ekit.NewInstance(t)
	path := datadir.Dir(in.DataDir).DB()
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
func checkCorruptLine(t *testing.T, cmd string, r e2ekit.Result) {
	t.Helper()
	checkFailLine(t, cmd, r, "corrupt", "memnode.db", "memnode repair")
}

// startDeadline is how long `memnode start`/`run` may take to give up on a corrupt
// database (the bound); the start timeout for a healthy node is longer.
const startDeadline = 10 * time.Second

func TestRunFailsOnACorruptDatabase(t *testing.T) {
	in := corruptInstance(t)
	r := in.Run(nil, "run")
	if r.Code != 1 {
		t.Errorf("run exit code = %d, want 1", r.Code)
	}
	checkCorruptLine(t, "run", r)
	if datadir.Held(in.DataDir) {
		t.Fatal("the data dir is still locked")
	}
}

func TestStartFailsOnACorruptDatabase(t *testing.T) {
	in := corruptInstance(t)
	r := in.Run(nil, "start")
	checkCorruptLine(t, "start", r)
	if datadir.Held(in.DataDir) {
		t.Fatal("a node still holds the data dir")
	}
}

// TestRepairThenStart: 'memnode repair' moves the damaged file aside and builds a new
// database from what reads; the node then starts on it.
func TestRepairThenStart(t *testing.T) {
	t.Parallel()
	in := corruptInstance(t)
	r := in.Run(nil, "repair")
	if r.Code != 0 || !strings.Contains(r.Stdout, "recovered") || !strings.Contains(r.Stdout, ".corrupt-") {
		t.Fatalf("repair: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	damaged, _ := filepath.Glob(datadir.Dir(in.DataDir).DB() + ".corrupt-*")
	if len(damaged) == 0 {
		t.Fatal("the damaged file was not kept")
	}
	if r := in.Run(nil, "repair"); r.Code != 0 || !strings.Contains(r.Stdout, "nothing to repair") {
		t.Fatalf("second repair: exit %d: %s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := in.Run(nil, "start"); r.Code != 0 {
		t.Fatalf("start after repair: exit %d: %s", r.Code, r.Stderr)
	}
	if r := in.Run(nil, "repair"); r.Code == 0 || !strings.Contains(r.Stderr, "memnode stop") {
		t.Fatalf("repair while the node runs: exit %d: %s", r.Code, r.Stderr)
	}
}

// TestBackgroundCheckFindsDeepDamage (issue 29): damage deep inside memnode.db (no root
// page, so the open's check does not read it) lets `memnode start` succeed at once; the
// full integrity check the node runs in the background after ready finds it, and the node
// then reports the corruption and the repair as for damage found by a read.
func TestBackgroundCheckFindsDeepDamage(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	export := filepath.Join(t.TempDir(), "many.jsonl")
	e2ekit.WriteObservations(t, export, 3000)
	in.MustRun(nil, "import", export)
	in.MustRun(nil, "stop")
	testkit.DamageDataPages(t, datadir.Dir(in.DataDir).DB(), 8)
	// The open's check passes: the node starts. On a database this small the background
	// check may finish before start's last poll, and start then names the corruption.
	if r := in.Run(nil, "start"); r.Code != 0 && !strings.Contains(r.Stderr, "integrity check") {
		t.Fatalf("start: the open refused the damage it should leave to the background check: exit %d: %s", r.Code, r.Stderr)
	}
	if pid := in.PidFile(); pid > 0 {
		in.Started = append(in.Started, pid)
	}
	// Found by the background check, not by a read (nothing reads here but it).
	testkit.WaitFor(t, "the background check to find the damage", 60*time.Second, func() bool {
		log, _ := os.ReadFile(datadir.Dir(in.DataDir).NodeLog())
		return strings.Contains(string(log), "integrity check found the database corrupt")
	})
	var st struct {
		Status apitype.Status `json:"status"`
	}
	if err := json.Unmarshal([]byte(in.Run(nil, "status", "--json").Stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Status.Storage.State != apitype.StorageCorrupt || !strings.Contains(st.Status.Storage.Message, "memnode repair") {
		t.Fatalf("status after the check found the damage: %+v", st.Status.Storage)
	}
}

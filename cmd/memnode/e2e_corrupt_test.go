package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	if r.code == 0 {
		t.Fatalf("%s on a corrupt database exited 0\nstderr: %s", cmd, r.stderr)
	}
	if r.took > startDeadline {
		t.Errorf("%s took %s to fail; want under %s", cmd, r.took, startDeadline)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if strings.HasPrefix(l, "memnode: ") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%s: want one memnode: line, got %d\nstderr: %s", cmd, len(lines), r.stderr)
	}
	for _, want := range []string{"corrupt", "memnode.db", "memnode repair"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("%s: line %q does not name %q", cmd, lines[0], want)
		}
	}
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

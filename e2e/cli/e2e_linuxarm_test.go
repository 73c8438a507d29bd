package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// arm64Dir holds the linux/arm64 binaries `make arm64` (a step of `make test`) cross-builds. (This file is not named *_arm64_test.go: that suffix would build it on arm64 only.)
const arm64Dir = "../../bin/linux_arm64"

// qemuSysroot is Debian's aarch64 glibc (libc6-arm64-cross, with gcc-aarch64-linux-gnu).
const qemuSysroot = "/usr/aarch64-linux-gnu"

// TestArm64BinariesUnderQemu runs the release's linux/arm64 memnode and memnode-hook under
// qemu-aarch64-static (user-mode emulation, started directly with -L: containers often have no
// binfmt_misc): the Claude Code fixture replay through the arm64 hook into an arm64 node, then
// a search, the next session's context and a forget.
// Not parallel: its hooks run emulated memnode-hook binaries against an emulated node, and a
// hook has a time budget (past it the event is spooled, and after three such hooks in a row
// the hook fails loudly), which the other tests' processes beside it pushed it past
// (.ci/run, 2 cores). It runs first, alone.
func TestArm64BinariesUnderQemu(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux/arm64 emulation is checked on Linux")
	}
	ci := os.Getenv("MEMNODE_CI") == "1"
	miss := func(what string) {
		if ci {
			t.Fatalf("%s (MEMNODE_CI=1: .ci/run installs qemu-user-static and gcc-aarch64-linux-gnu; make test runs make arm64)", what)
		}
		t.Skip(what + ": run 'make arm64' (needs gcc-aarch64-linux-gnu) and install qemu-user-static")
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		miss("no qemu-aarch64-static in PATH")
	}
	if _, err := os.Stat(filepath.Join(qemuSysroot, "lib", "ld-linux-aarch64.so.1")); err != nil {
		miss("no aarch64 glibc in " + qemuSysroot)
	}
	dir, err := filepath.Abs(arm64Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"memnode", "memnoded", "memnode-hook"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			miss("no " + filepath.Join(arm64Dir, b))
		}
	}
	// Wrappers named like the binaries: memnode-hook finds "memnode" beside it to start the
	// node, and every command here runs the arm64 build.
	wrap := t.TempDir()
	for _, b := range []string{"memnode", "memnode-hook"} {
		script := "#!/bin/sh\nexec " + qemu + " -L " + qemuSysroot + " " + filepath.Join(dir, b) + ` "$@"` + "\n"
		if err := os.WriteFile(filepath.Join(wrap, b), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	in := e2ekit.NewInstance(t)
	in.Bin, in.HookBin = filepath.Join(wrap, "memnode"), filepath.Join(wrap, "memnode-hook")
	if out := in.MustRun(nil, "version"); !strings.Contains(out, "linux/arm64") {
		t.Fatalf("memnode version under qemu = %q, want linux/arm64", out)
	}
	// `memnode start` and `memnode run` execute the (arm64) memnoded, which only binfmt_misc
	// could run: the node runs in the foreground under qemu instead.
	node := exec.Command(qemu, "-L", qemuSysroot, filepath.Join(dir, "memnoded"), "run")
	node.Env = in.Env()
	node.Dir = in.DataDir
	logf, err := os.Create(filepath.Join(t.TempDir(), "node.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	node.Stdout, node.Stderr = logf, logf
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { node.Wait(); close(done) }()
	t.Cleanup(func() {
		node.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			node.Process.Kill()
			<-done
		}
	})
	testkit.WaitFor(t, "the arm64 node to be ready", 3*time.Minute, func() bool {
		return in.Run(nil, "status").Code == 0
	})
	proj := replayFixture(t, in)
	db := in.Db()
	testkit.WaitFor(t, "the arm64 node to process the session", 3*time.Minute, func() bool {
		return in.Queued() == 0 && in.Count(db, "SELECT COUNT(*) FROM summaries") == 1
	})
	var found struct {
		Hits []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"hits"`
	}
	out := in.MustRun(nil, "search", "middleware", "--json")
	if err := json.Unmarshal([]byte(out), &found); err != nil || len(found.Hits) == 0 {
		t.Fatalf("search middleware under qemu: %v\n%s", err, out)
	}
	if ctx := e2ekit.ContextFor(t, in, proj); !strings.Contains(ctx, "middleware.go") {
		t.Errorf("the next session's context lacks middleware.go:\n%s", ctx)
	}
	id := found.Hits[0].ID
	if out := in.MustRun(nil, "forget", id); !strings.Contains(out, "forgot 1 of 1") {
		t.Fatalf("forget %s: %s", id, out)
	}
	if out := in.MustRun(nil, "search", "middleware", "--json"); strings.Contains(out, `"`+id+`"`) {
		t.Errorf("search still finds the forgotten %s:\n%s", id, out)
	}
}

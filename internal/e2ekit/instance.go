// Package e2ekit is the kit of memnode's real-process tests (e2e/..., and cmd/memnode's
// own tests that run the binary): an Instance is a data dir and a port that memnode
// processes run from; Main builds the binaries once per test process (internal/testbin);
// the rest are the helpers more than one e2e package uses (sync peers, team members, a
// headless Chromium, fake providers, generated agent sessions).
package e2ekit

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/memnode/memnode/internal/sqliteuri"
	"github.com/memnode/memnode/internal/testbin"
)

// MemnodeBin is the real binary under test, the lean memnode (memnoded and memnode-hook
// beside it), built once per test process by Main through internal/testbin.
var MemnodeBin string

// Main is the TestMain of every package of real-process tests (e2e/...): it makes the test
// binary a port squatter when SquatterEnv asks for one (TestPortSquatterGetsNothing), builds
// memnode, memnoded and memnode-hook once (internal/testbin: cached across processes and
// checkouts, under a lock), runs the tests and returns their exit code. Under -short it runs none of
// them (each starts real processes, and some install an agent CLI before they would skip)
// and builds nothing; under -list it builds nothing.
func Main(m *testing.M) int {
	return run(m, true)
}

// MainWithUnitTests is Main for a package that also holds unit tests (cmd/memnode): under
// -short those run and the real-process ones skip (NeedBinaries).
func MainWithUnitTests(m *testing.M) int {
	return run(m, false)
}

func run(m *testing.M, allNeedBinaries bool) int {
	if addr := os.Getenv(SquatterEnv); addr != "" {
		return RunSquatter(addr)
	}
	flag.Parse()
	listing := flag.Lookup("test.list").Value.String() != ""
	if testing.Short() && allNeedBinaries && !listing {
		fmt.Fprintln(os.Stderr, "e2ekit: -short: every test of this package starts real processes; none run (make test runs them)")
		return 0
	}
	if testing.Short() || listing {
		return m.Run()
	}
	dir, err := testbin.Memnode()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	MemnodeBin = filepath.Join(dir, "memnode")
	return m.Run()
}

// Instance is one data dir + port; processes started from it share them.
type Instance struct {
	Tb      testing.TB
	DataDir string
	Port    int
	Extra   []string
	Started []int // pids of the nodes start() started: killed at cleanup even when a test rewrote or lost the pid file
	// bin and hookBin, when set, replace memnodeBin and its memnode-hook (the linux/arm64
	// build run through qemu: e2e_linuxarm_test.go).
	Bin, HookBin string
}

// NeedBinaries skips a test that runs real memnode processes under -short (make
// test-short, the inner loop); make test runs it.
func NeedBinaries(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: starts real memnode processes")
	}
}

func NewInstance(tb testing.TB) *Instance {
	tb.Helper()
	NeedBinaries(tb)
	in := &Instance{Tb: tb, DataDir: tb.TempDir(), Port: FreePort(tb)}
	tb.Cleanup(func() { in.Kill() })
	return in
}

// FreePort returns a port of 127.0.0.1 that was free for TCP a moment ago, for a process to
// bind. It is picked at random below the kernel's ephemeral range (net.ipv4.ip_local_port_range,
// 32768-60999 by default), never by binding port 0: the kernel hands ports of that range to
// every listen on port 0 and to every outgoing connection, so a port it chose for one test
// could be given to another test's connection (or another package's test process) before
// the memnode that was meant to bind it starts. Tests running in parallel (t.Parallel, or
// other packages' test processes) pick independently at random from ~12,000 ports, so two
// of them choosing the same port in the instant between the pick and the bind is unlikely,
// and a port another test already bound fails the check here and is skipped.
func FreePort(tb testing.TB) int {
	tb.Helper()
	const lo, hi = 20000, 32768
	var err error
	for range 100 {
		p := lo + rand.IntN(hi-lo)
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			l.Close()
			return p
		}
	}
	tb.Fatalf("no free port in %d-%d: %v", lo, hi-1, err)
	return 0
}

func (in *Instance) Env() []string {
	env := append(os.Environ(), "MEMNODE_DATA_DIR="+in.DataDir, "MEMNODE_PORT="+strconv.Itoa(in.Port), "HOME="+in.DataDir,
		"MEMNODE_SYNC_PORT=-1", "MEMNODE_GOSSIP_PORT=-1")
	return append(env, in.Extra...)
}

type Result struct {
	Stdout, Stderr string
	Code           int
	Took           time.Duration
}

// Run runs `memnode args...` with stdin and returns its output and exit code.
func (in *Instance) Run(stdin []byte, args ...string) Result {
	in.Tb.Helper()
	if in.Bin != "" {
		return in.RunBin(in.Bin, stdin, args...)
	}
	return in.RunBin(MemnodeBin, stdin, args...)
}

// RunLean runs the lean memnode-hook binary (what `memnode install` puts in the IDE).
func (in *Instance) RunLean(stdin []byte, args ...string) Result {
	in.Tb.Helper()
	if in.HookBin != "" {
		return in.RunBin(in.HookBin, stdin, args...)
	}
	return in.RunBin(filepath.Join(filepath.Dir(MemnodeBin), "memnode-hook"), stdin, args...)
}

func (in *Instance) RunBin(bin string, stdin []byte, args ...string) Result {
	in.Tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = in.Env()
	cmd.Dir = in.DataDir
	if _, err := os.Stat(in.DataDir); err != nil {
		cmd.Dir = os.TempDir() // a test of the command that creates the data dir
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := Result{Stdout: out.String(), Stderr: errb.String(), Took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.Code = ee.ExitCode()
	case err != nil:
		in.Tb.Fatalf("memnode %v: %v", args, err)
	}
	return r
}

func (in *Instance) MustRun(stdin []byte, args ...string) string {
	in.Tb.Helper()
	r := in.Run(stdin, args...)
	if r.Code != 0 {
		in.Tb.Fatalf("memnode %v: exit %d\nstdout: %s\nstderr: %s", args, r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

func (in *Instance) Start() {
	in.Tb.Helper()
	in.MustRun(nil, "start")
	if pid := in.PidFile(); pid > 0 {
		in.Started = append(in.Started, pid)
	}
}

// Kill stops the node hard if one runs (cleanup; tests that need a clean stop call stop).
func (in *Instance) Kill() {
	for _, pid := range append(in.Started, in.PidFile()) {
		if p, err := os.FindProcess(pid); err == nil && pid > 0 {
			p.Kill()
		}
	}
}

// PidFile is the pid the data dir's pid file names, or 0.
func (in *Instance) PidFile() int {
	b, err := os.ReadFile(filepath.Join(in.DataDir, "memnode.pid"))
	if err != nil {
		return 0
	}
	var pid int
	if _, err := fmt.Sscanf(string(bytes.TrimSpace(b)), `{"pid":%d`, &pid); err != nil {
		return 0
	}
	return pid
}

// Db opens the instance's database read-only (WAL allows it while the node runs).
func (in *Instance) Db() *sql.DB {
	in.Tb.Helper()
	db, err := sql.Open("sqlite3", sqliteuri.File(filepath.Join(in.DataDir, "memnode.db"), readOnly()))
	if err != nil {
		in.Tb.Fatal(err)
	}
	in.Tb.Cleanup(func() { db.Close() })
	return db
}

// Queued is how many events wait in the node's queue database.
func (in *Instance) Queued() int {
	in.Tb.Helper()
	q, err := sql.Open("sqlite3", sqliteuri.File(filepath.Join(in.DataDir, "memnode.queue.db"), readOnly()))
	if err != nil {
		in.Tb.Fatal(err)
	}
	defer q.Close()
	return in.Count(q, "SELECT COUNT(*) FROM pending")
}

func (in *Instance) Count(db *sql.DB, q string, args ...any) int {
	in.Tb.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		in.Tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// readOnly is the URI options of a test's read of a node's database beside the running node.
func readOnly() url.Values {
	return url.Values{"mode": {"ro"}, "_busy_timeout": {"5000"}}
}

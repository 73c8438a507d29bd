package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/memnode/memnode/internal/testbin"
)

// memnodeBin is the real binary under test (memnode-hook beside it), built once by
// TestMain through internal/testbin.
var memnodeBin string

func TestMain(m *testing.M) {
	if addr := os.Getenv(squatterEnv); addr != "" {
		os.Exit(runSquatter(addr))
	}
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // no real processes under -short (make test-short): nothing to build
	}
	// Built once for every test process and checkout, under a lock (internal/testbin): a
	// warm run and a second package's tests build nothing.
	dir, err := testbin.Memnode()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	memnodeBin = filepath.Join(dir, "memnode")
	os.Exit(m.Run())
}

// instance is one data dir + port; processes started from it share them.
type instance struct {
	tb      testing.TB
	dataDir string
	port    int
	extra   []string
	started []int // pids of the nodes start() started: killed at cleanup even when a test rewrote or lost the pid file
	// bin and hookBin, when set, replace memnodeBin and its memnode-hook (the linux/arm64
	// build run through qemu: e2e_linuxarm_test.go).
	bin, hookBin string
}

// needBinaries skips a test that runs real memnode processes under -short (make
// test-short, the inner loop); make test runs it.
func needBinaries(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: starts real memnode processes")
	}
}

func newInstance(tb testing.TB) *instance {
	tb.Helper()
	needBinaries(tb)
	in := &instance{tb: tb, dataDir: tb.TempDir(), port: freePort(tb)}
	tb.Cleanup(func() { in.kill() })
	return in
}

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (in *instance) env() []string {
	env := append(os.Environ(), "MEMNODE_DATA_DIR="+in.dataDir, "MEMNODE_PORT="+strconv.Itoa(in.port), "HOME="+in.dataDir,
		"MEMNODE_SYNC_PORT=-1", "MEMNODE_GOSSIP_PORT=-1")
	return append(env, in.extra...)
}

type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// run runs `memnode args...` with stdin and returns its output and exit code.
func (in *instance) run(stdin []byte, args ...string) result {
	in.tb.Helper()
	if in.bin != "" {
		return in.runBin(in.bin, stdin, args...)
	}
	return in.runBin(memnodeBin, stdin, args...)
}

// runLean runs the lean memnode-hook binary (what `memnode install` puts in the IDE).
func (in *instance) runLean(stdin []byte, args ...string) result {
	in.tb.Helper()
	if in.hookBin != "" {
		return in.runBin(in.hookBin, stdin, args...)
	}
	return in.runBin(filepath.Join(filepath.Dir(memnodeBin), "memnode-hook"), stdin, args...)
}

func (in *instance) runBin(bin string, stdin []byte, args ...string) result {
	in.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = in.env()
	cmd.Dir = in.dataDir
	if _, err := os.Stat(in.dataDir); err != nil {
		cmd.Dir = os.TempDir() // a test of the command that creates the data dir
	}
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		in.tb.Fatalf("memnode %v: %v", args, err)
	}
	return r
}

func (in *instance) mustRun(stdin []byte, args ...string) string {
	in.tb.Helper()
	r := in.run(stdin, args...)
	if r.code != 0 {
		in.tb.Fatalf("memnode %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func (in *instance) start() {
	in.tb.Helper()
	in.mustRun(nil, "start")
	if pid := in.pidFile(); pid > 0 {
		in.started = append(in.started, pid)
	}
}

// kill stops the node hard if one runs (cleanup; tests that need a clean stop call stop).
func (in *instance) kill() {
	for _, pid := range append(in.started, in.pidFile()) {
		if p, err := os.FindProcess(pid); err == nil && pid > 0 {
			p.Kill()
		}
	}
}

// pidFile is the pid the data dir's pid file names, or 0.
func (in *instance) pidFile() int {
	b, err := os.ReadFile(filepath.Join(in.dataDir, "memnode.pid"))
	if err != nil {
		return 0
	}
	var pid int
	if _, err := fmt.Sscanf(string(bytes.TrimSpace(b)), `{"pid":%d`, &pid); err != nil {
		return 0
	}
	return pid
}

// db opens the instance's database read-only (WAL allows it while the node runs).
func (in *instance) db() *sql.DB {
	in.tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(in.dataDir, "memnode.db")+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		in.tb.Fatal(err)
	}
	in.tb.Cleanup(func() { db.Close() })
	return db
}

// queued is how many events wait in the node's queue database.
func (in *instance) queued() int {
	in.tb.Helper()
	q, err := sql.Open("sqlite3", "file:"+filepath.Join(in.dataDir, "memnode.queue.db")+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		in.tb.Fatal(err)
	}
	defer q.Close()
	return in.count(q, "SELECT COUNT(*) FROM pending")
}

func (in *instance) count(db *sql.DB, q string, args ...any) int {
	in.tb.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		in.tb.Fatalf("%s: %v", q, err)
	}
	return n
}

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestRunSaysWhatMattersAndLogs: `memnode run` (what `make run` runs) on a fresh data dir
// names the viewer command, says no agent is hooked up yet and what to run, and where its
// log is, in its first lines; and it writes that log, so the viewer's Logs page and doctor
// see a node run in a terminal. Under `memnode start` the same lines are in the log once.
func TestRunSaysWhatMattersAndLogs(t *testing.T) {
	in := newInstance(t)
	in.dataDir = filepath.Join(in.dataDir, "fresh") // does not exist yet
	sc, stop := startRun(t, in)
	var first []string
	for len(first) < 3 && sc.Scan() {
		first = append(first, sc.Text())
	}
	head := strings.Join(first, "\n")
	logPath := filepath.Join(in.dataDir, "logs", "memnode.log")
	for _, want := range []string{"memnode viewer", "no agent hooked up yet: memnode install", logPath} {
		if !strings.Contains(head, want) {
			t.Errorf("run's first lines lack %q:\n%s", want, head)
		}
	}
	go func() { // keep the pipe drained until the node exits
		for sc.Scan() {
		}
	}()
	b, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(b), "no agent hooked up yet") {
		t.Errorf("%s under run: %v\n%s", logPath, err, b)
	}
	stop()

	os.Remove(logPath)
	in.start()
	in.mustRun(nil, "stop")
	b, _ = os.ReadFile(logPath)
	if n := strings.Count(string(b), "no agent hooked up yet"); n != 1 {
		t.Errorf("under start, the log holds the start-up lines %d times:\n%s", n, b)
	}
}

// startRun starts `memnode run` (the node in the foreground, what `make run` runs) on in and
// returns a scanner over its stderr and stop, which ends the node (SIGTERM, a kill after
// 20 s) and waits for it; the test's cleanup calls stop too.
func startRun(t *testing.T, in *instance) (*bufio.Scanner, func()) {
	t.Helper()
	cmd := exec.Command(memnodeBin, "run")
	cmd.Env = in.env()
	cmd.Dir = t.TempDir()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := sync.OnceFunc(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	t.Cleanup(stop)
	return bufio.NewScanner(stderr), stop
}

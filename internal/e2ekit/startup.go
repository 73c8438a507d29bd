package e2ekit

import (
	"bufio"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// StartRun starts `memnode run` (the node in the foreground, what `make run` runs) on in and
// returns a scanner over its stderr and stop, which ends the node (SIGTERM, a kill after
// 20 s) and waits for it; the test's cleanup calls stop too.
func StartRun(t *testing.T, in *Instance) (*bufio.Scanner, func()) {
	t.Helper()
	cmd := exec.Command(MemnodeBin, "run")
	cmd.Env = in.Env()
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

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// TestRunSaysWhatMattersAndLogs: `memnode run` (what `make run` runs) on a fresh data dir
// names the viewer command, says no agent is hooked up yet and what to run, and where its
// log is, in its first lines; and it writes that log, so the viewer's Logs page and doctor
// see a node run in a terminal. Under `memnode start` the same lines are in the log once.
func TestRunSaysWhatMattersAndLogs(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.DataDir = filepath.Join(in.DataDir, "fresh") // does not exist yet
	sc, stop := e2ekit.StartRun(t, in)
	var first []string
	for len(first) < 3 && sc.Scan() {
		first = append(first, sc.Text())
	}
	head := strings.Join(first, "\n")
	logPath := filepath.Join(in.DataDir, "logs", "memnode.log")
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
	in.Start()
	in.MustRun(nil, "stop")
	b, _ = os.ReadFile(logPath)
	if n := strings.Count(string(b), "no agent hooked up yet"); n != 1 {
		t.Errorf("under start, the log holds the start-up lines %d times:\n%s", n, b)
	}
}

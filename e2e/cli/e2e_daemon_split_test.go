package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/e2ekit"
)

// TestLeanMemnodeHandsTheDaemonCommandsToMemnoded: the memnode users run is the lean client;
// `memnode run` becomes memnoded in the same process (the pid a shell or service manager
// holds is the node's), `memnoded version` names itself with the same build, and doctor
// says the pair is whole.
func TestLeanMemnodeHandsTheDaemonCommandsToMemnoded(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	daemon := filepath.Join(filepath.Dir(e2ekit.MemnodeBin), "memnoded")
	lean := in.MustRun(nil, "version")
	full := in.RunBin(daemon, nil, "version").Stdout
	_, leanBuild, _ := strings.Cut(strings.TrimSpace(lean), " ")
	name, fullBuild, _ := strings.Cut(strings.TrimSpace(full), " ")
	if !strings.HasPrefix(lean, "memnode ") || name != "memnoded" || leanBuild != fullBuild {
		t.Fatalf("memnode version %q, memnoded version %q: want the same build under each name", lean, full)
	}

	cmd := exec.Command(e2ekit.MemnodeBin, "run")
	cmd.Env = in.Env()
	cmd.Dir = in.DataDir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	deadline := time.Now().Add(30 * time.Second)
	for !datadir.Held(in.DataDir) {
		select {
		case <-exited:
			t.Fatalf("memnode run exited before holding the data dir: %v", waitErr)
		case <-time.After(20 * time.Millisecond): // polling the lock of a process we cannot wait on
		}
		if time.Now().After(deadline) {
			t.Fatal("memnode run holds no data dir lock after 30 s")
		}
	}
	holder, known := datadir.LockHolder(in.DataDir)
	if known && holder != cmd.Process.Pid {
		t.Fatalf("the data dir's lock is held by pid %d, memnode run is pid %d: run must exec memnoded, not start a child", holder, cmd.Process.Pid)
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/exe")
	if err == nil && filepath.Base(exe) != "memnoded" {
		t.Errorf("pid %d runs %s, want memnoded", cmd.Process.Pid, exe)
	}
	var doc struct {
		Checks []struct {
			Name   string `json:"name"`
			OK     bool   `json:"ok"`
			Detail string `json:"detail"`
		} `json:"checks"`
	}
	r := in.Run(nil, "doctor", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, r.Stdout)
	}
	found := false
	for _, c := range doc.Checks {
		if c.Name == "daemon" {
			found = true
			if !c.OK || c.Detail != daemon {
				t.Errorf("doctor's daemon check: %+v, want ok naming %s", c, daemon)
			}
		}
	}
	if !found {
		t.Errorf("doctor has no daemon check: %s", r.Stdout)
	}
	if r := in.Run(nil, "stop"); r.Code != 0 {
		t.Fatalf("stop: %d %s", r.Code, r.Stderr)
	}
	<-exited
	if waitErr != nil {
		t.Fatalf("memnode run after stop: %v (want exit 0)", waitErr)
	}
}

// TestLeanMemnodeWithoutItsDaemon: a memnode copied alone (memnoded neither beside it nor on
// PATH) still answers what it runs itself, and for the daemon's commands prints one line
// that names memnoded and the fix, exit 1; doctor reports it as a problem with the fix.
func TestLeanMemnodeWithoutItsDaemon(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("unix only")
	}
	in := e2ekit.NewInstance(t)
	alone := filepath.Join(t.TempDir(), "memnode")
	b, err := os.ReadFile(e2ekit.MemnodeBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	in.Extra = append(in.Extra, "PATH="+filepath.Dir(alone)+":/usr/bin:/bin")
	if r := in.RunBin(alone, nil, "version"); r.Code != 0 || !strings.HasPrefix(r.Stdout, "memnode ") {
		t.Fatalf("version without memnoded: %d %q %q", r.Code, r.Stdout, r.Stderr)
	}
	for _, args := range [][]string{{"run"}, {"start"}, {"peers", "--json"}} {
		r := in.RunBin(alone, nil, args...)
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != 1 || len(lines) != 1 || !strings.Contains(r.Stderr, "memnoded") || !strings.Contains(r.Stderr, "reinstall memnode") || r.Stdout != "" {
			t.Errorf("memnode %v without memnoded: exit %d, stdout %q, stderr %q; want exit 1 and one line naming memnoded and the fix", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	r := in.RunBin(alone, nil, "doctor")
	if r.Code != 1 || !strings.Contains(r.Stdout, "FAIL daemon") || !strings.Contains(r.Stdout, "fix: reinstall memnode") {
		t.Errorf("doctor without memnoded: exit %d\n%s", r.Code, r.Stdout)
	}
}

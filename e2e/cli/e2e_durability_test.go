package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// TestKill9DuringBurst: kill -9 of the node during a burst of 10,000 events. Every event
// whose POST was acknowledged is stored after restart; hook events are stored or were
// spooled and replayed; nothing is stored twice.
func TestKill9DuringBurst(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("burst test skipped in -short")
	}
	const total, hookEvents = 10000, 60
	in := e2ekit.NewInstance(t)
	in.Start()
	tok, url := in.Token(), fmt.Sprintf("http://127.0.0.1:%d/api/events", in.Port)
	victim := in.Pid()

	var acked sync.Map
	var nAcked, nFailed atomic.Int64
	var killed atomic.Bool
	next := atomic.Int64{}
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= total {
					return
				}
				id := fmt.Sprintf("burst-%05d", i)
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(e2ekit.ObservationEvent(id, fmt.Sprintf("s%d", i%16), "burst", "go test ./pkg/"+id)))
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := client.Do(req)
				if err != nil {
					nFailed.Add(1)
					continue
				}
				var rep struct{ OK bool }
				json.NewDecoder(resp.Body).Decode(&rep)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && rep.OK {
					acked.Store(id, true)
					if nAcked.Add(1) == 3000 && killed.CompareAndSwap(false, true) {
						syscall.Kill(victim, syscall.SIGKILL)
					}
				} else {
					nFailed.Add(1)
				}
			}
		}()
	}
	// Real hook processes fire alongside; they must never fail the IDE.
	proj := filepath.Join(t.TempDir(), "hookproj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	var hookCodes sync.Map
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < hookEvents; i += 2 {
				payload := fmt.Sprintf(`{"session_id":"hook-session","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"go build ./cmd/tool%d"},"tool_response":{"stdout":"built tool %d\n"}}`, proj, i, i)
				r := in.Run([]byte(payload), "hook", "claude-code", "observation")
				hookCodes.Store(i, r.Code)
			}
		}(w)
	}
	wg.Wait()
	if !killed.Load() {
		t.Fatal("the node was never killed: burst too small?")
	}
	t.Logf("acked %d, failed %d", nAcked.Load(), nFailed.Load())
	hookCodes.Range(func(k, v any) bool {
		if c := v.(int); c != 0 && c != 2 {
			t.Errorf("hook %v exited %d", k, c)
		}
		return true
	})

	// Restart (a hook may already have restarted it) and let the queue and spool drain.
	in.Start()
	db := in.Db()
	testkit.WaitFor(t, "queue drained", 60*time.Second, func() bool {
		return in.Queued() == 0
	})
	// Spooled hook events are replayed on start; a node a hook restarted may already have
	// drained them. Either way all hook events must be stored exactly once.
	defer func() {
		if t.Failed() {
			n := in.Count(db, "SELECT COUNT(*) FROM observations WHERE project = 'hookproj'")
			spool, _ := filepath.Glob(filepath.Join(in.DataDir, "spool", "*"))
			logs, _ := os.ReadFile(filepath.Join(in.DataDir, "logs", "memnode.log"))
			hlog, _ := os.ReadFile(filepath.Join(in.DataDir, "logs", "hook.log"))
			t.Logf("hook observations %d; spool files %v\nnode log:\n%s\nhook log:\n%s", n, spool, logs, hlog)
		}
	}()
	testkit.WaitFor(t, "hook events stored", 30*time.Second, func() bool {
		return in.Count(db, "SELECT COUNT(*) FROM observations WHERE project = 'hookproj'") >= hookEvents
	})
	if n := in.Count(db, "SELECT COUNT(*) FROM observations WHERE project = 'hookproj'"); n != hookEvents {
		t.Errorf("hook observations = %d, want exactly %d", n, hookEvents)
	}
	missing := 0
	acked.Range(func(k, _ any) bool {
		if in.Count(db, "SELECT COUNT(*) FROM seen_events WHERE event_id = ?", k) != 1 {
			missing++
		}
		return true
	})
	if missing > 0 {
		t.Fatalf("%d acknowledged events were lost", missing)
	}
	stored := in.Count(db, "SELECT COUNT(*) FROM observations WHERE project = 'burst'")
	if stored < int(nAcked.Load()) || stored > total {
		t.Fatalf("burst observations = %d, acked %d, sent %d", stored, nAcked.Load(), total)
	}
}

// TestHooksWhenNodeUnstartable: with the port held by another program the node cannot
// start; hooks still answer in time, spool, fail loud after 3, and the spooled events appear
// once the node can start.
func TestHooksWhenNodeUnstartable(t *testing.T) {
	in := e2ekit.NewInstance(t)
	if err := os.WriteFile(filepath.Join(in.DataDir, "settings.json"), []byte(`{"hook_timeout":"3s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A directory where the node's socket must go: the node cannot start (a taken TCP port
	// no longer stops it; it would serve the socket alone).
	blocker := filepath.Join(in.DataDir, "memnode.sock")
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(t.TempDir(), "offline")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	var codes []int
	for i := 0; i < 4; i++ {
		payload := fmt.Sprintf(`{"session_id":"s-off","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make offline-%d"},"tool_response":{"stdout":"ok"}}`, proj, i)
		r := in.RunLean([]byte(payload), "hook", "claude-code", "observation")
		if r.Took > 3*time.Second+2*time.Second {
			t.Errorf("hook %d took %s, over its 3s budget", i, r.Took)
		}
		if !json.Valid([]byte(r.Stdout)) {
			t.Errorf("hook %d stdout %q is not JSON", i, r.Stdout)
		}
		codes = append(codes, r.Code)
		if r.Code == 2 && strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Errorf("fail-loud stderr must be one line, got %q", r.Stderr)
		}
	}
	if fmt.Sprint(codes) != "[0 0 2 2]" {
		t.Fatalf("exit codes = %v, want [0 0 2 2]", codes)
	}
	os.RemoveAll(blocker)
	in.Start()
	db := in.Db()
	testkit.WaitFor(t, "spooled events stored", 30*time.Second, func() bool {
		return in.Count(db, "SELECT COUNT(*) FROM observations WHERE project = 'offline'") == 4
	})
}

// TestStalePIDFileNeverFakesSuccess: a pid file naming a process that is not memnode.
func TestStalePIDFileNeverFakesSuccess(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	stale := fmt.Sprintf(`{"pid":%d,"port":%d}`, other.Process.Pid, in.Port)
	os.WriteFile(filepath.Join(in.DataDir, "memnode.pid"), []byte(stale), 0o600)
	if r := in.Run(nil, "status"); r.Code != 3 || !strings.Contains(r.Stdout, "not running") {
		t.Fatalf("status with a stale pid file: exit %d %q", r.Code, r.Stdout)
	}
	if r := in.Run(nil, "stop"); r.Code != 0 || !strings.Contains(r.Stdout, "not running") {
		t.Fatalf("stop with a stale pid file: exit %d %q", r.Code, r.Stdout)
	}
	if other.ProcessState != nil {
		t.Fatal("stop signalled a process that is not memnode")
	}
	in.Start()
	if r := in.Run(nil, "status"); r.Code != 0 || !strings.Contains(r.Stdout, "running (pid") {
		t.Fatalf("status after start: exit %d %q", r.Code, r.Stdout)
	}
	// A second node on the same data dir refuses to run.
	if r := in.Run(nil, "run"); r.Code == 0 || !strings.Contains(r.Stderr, "already running") {
		t.Fatalf("second run: exit %d %q", r.Code, r.Stderr)
	}
	in.MustRun(nil, "stop")
	if r := in.Run(nil, "status"); r.Code != 3 {
		t.Fatalf("status after stop: exit %d", r.Code)
	}
}

// TestAPINeedsToken: the token file is private and the API refuses requests without it.
func TestAPINeedsToken(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	fi, err := os.Stat(filepath.Join(in.DataDir, "token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	for _, auth := range []string{"", "Bearer wrong", "Basic " + in.Token()} {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/api/status", in.Port), nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("auth %q: status %d, want 401", auth, resp.StatusCode)
		}
	}
}

// TestConcurrentStarts: hooks firing together while the node is down all start it; exactly
// one node runs and every start returns once it is ready.
func TestConcurrentStarts(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	var wg sync.WaitGroup
	results := make([]e2ekit.Result, 5)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = in.Run(nil, "start")
		}(i)
	}
	wg.Wait()
	pids := map[string]bool{}
	for i, r := range results {
		if r.Code != 0 {
			t.Fatalf("start %d: exit %d: %s", i, r.Code, r.Stderr)
		}
		f := strings.Fields(r.Stdout)
		for j, w := range f {
			if w == "(pid" && j+1 < len(f) {
				pids[strings.TrimRight(f[j+1], ")")] = true
			}
		}
	}
	if len(pids) != 1 {
		t.Fatalf("starts reported pids %v, want exactly one node", pids)
	}
}

package main

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

	"github.com/memnode/memnode/internal/testkit"
)

func (in *instance) token() string {
	in.tb.Helper()
	b, err := os.ReadFile(filepath.Join(in.dataDir, "token"))
	if err != nil {
		in.tb.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (in *instance) pid() int {
	in.tb.Helper()
	b, err := os.ReadFile(filepath.Join(in.dataDir, "memnode.pid"))
	if err != nil {
		in.tb.Fatal(err)
	}
	var p struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		in.tb.Fatal(err)
	}
	return p.PID
}

func observationEvent(id, session, project, command string) []byte {
	ev := map[string]any{
		"event_id": id, "kind": "observation", "platform": "claude-code", "session_id": session, "project": project,
		"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "burst " + id},
		"tool_response": map[string]any{"stdout": "done " + id + "\n", "stderr": ""},
		"at":            time.Now().UTC().Format(time.RFC3339Nano),
	}
	b, _ := json.Marshal(ev)
	return b
}

// TestKill9DuringBurst: kill -9 of the node during a burst of 10,000 events. Every event
// whose POST was acknowledged is stored after restart; hook events are stored or were
// spooled and replayed; nothing is stored twice.
func TestKill9DuringBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("burst test skipped in -short")
	}
	const total, hookEvents = 10000, 60
	in := newInstance(t)
	in.start()
	tok, url := in.token(), fmt.Sprintf("http://127.0.0.1:%d/api/events", in.port)
	victim := in.pid()

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
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(observationEvent(id, fmt.Sprintf("s%d", i%16), "burst", "go test ./pkg/"+id)))
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
				r := in.run([]byte(payload), "hook", "claude-code", "observation")
				hookCodes.Store(i, r.code)
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
	in.start()
	db := in.db()
	testkit.WaitFor(t, "queue drained", 60*time.Second, func() bool {
		return in.queued() == 0
	})
	// Spooled hook events are replayed on start; a node a hook restarted may already have
	// drained them. Either way all hook events must be stored exactly once.
	defer func() {
		if t.Failed() {
			n := in.count(db, "SELECT COUNT(*) FROM observations WHERE project = 'hookproj'")
			spool, _ := filepath.Glob(filepath.Join(in.dataDir, "spool", "*"))
			logs, _ := os.ReadFile(filepath.Join(in.dataDir, "logs", "memnode.log"))
			hlog, _ := os.ReadFile(filepath.Join(in.dataDir, "logs", "hook.log"))
			t.Logf("hook observations %d; spool files %v\nnode log:\n%s\nhook log:\n%s", n, spool, logs, hlog)
		}
	}()
	testkit.WaitFor(t, "hook events stored", 30*time.Second, func() bool {
		return in.count(db, "SELECT COUNT(*) FROM observations WHERE project = 'hookproj'") >= hookEvents
	})
	if n := in.count(db, "SELECT COUNT(*) FROM observations WHERE project = 'hookproj'"); n != hookEvents {
		t.Errorf("hook observations = %d, want exactly %d", n, hookEvents)
	}
	missing := 0
	acked.Range(func(k, _ any) bool {
		if in.count(db, "SELECT COUNT(*) FROM seen_events WHERE event_id = ?", k) != 1 {
			missing++
		}
		return true
	})
	if missing > 0 {
		t.Fatalf("%d acknowledged events were lost", missing)
	}
	stored := in.count(db, "SELECT COUNT(*) FROM observations WHERE project = 'burst'")
	if stored < int(nAcked.Load()) || stored > total {
		t.Fatalf("burst observations = %d, acked %d, sent %d", stored, nAcked.Load(), total)
	}
}

// TestHooksWhenNodeUnstartable: with the port held by another program the node cannot
// start; hooks still answer in time, spool, fail loud after 3, and the spooled events appear
// once the node can start.
func TestHooksWhenNodeUnstartable(t *testing.T) {
	in := newInstance(t)
	if err := os.WriteFile(filepath.Join(in.dataDir, "settings.json"), []byte(`{"hook_timeout":"3s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A directory where the node's socket must go: the node cannot start (a taken TCP port
	// no longer stops it; it would serve the socket alone).
	blocker := filepath.Join(in.dataDir, "memnode.sock")
	if err := os.MkdirAll(filepath.Join(blocker, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(t.TempDir(), "offline")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	var codes []int
	for i := 0; i < 4; i++ {
		payload := fmt.Sprintf(`{"session_id":"s-off","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make offline-%d"},"tool_response":{"stdout":"ok"}}`, proj, i)
		r := in.runLean([]byte(payload), "hook", "claude-code", "observation")
		if r.took > 3*time.Second+2*time.Second {
			t.Errorf("hook %d took %s, over its 3s budget", i, r.took)
		}
		if !json.Valid([]byte(r.stdout)) {
			t.Errorf("hook %d stdout %q is not JSON", i, r.stdout)
		}
		codes = append(codes, r.code)
		if r.code == 2 && strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("fail-loud stderr must be one line, got %q", r.stderr)
		}
	}
	if fmt.Sprint(codes) != "[0 0 2 2]" {
		t.Fatalf("exit codes = %v, want [0 0 2 2]", codes)
	}
	os.RemoveAll(blocker)
	in.start()
	db := in.db()
	testkit.WaitFor(t, "spooled events stored", 30*time.Second, func() bool {
		return in.count(db, "SELECT COUNT(*) FROM observations WHERE project = 'offline'") == 4
	})
}

// TestStalePIDFileNeverFakesSuccess: a pid file naming a process that is not memnode.
func TestStalePIDFileNeverFakesSuccess(t *testing.T) {
	in := newInstance(t)
	other := exec.Command("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	stale := fmt.Sprintf(`{"pid":%d,"port":%d}`, other.Process.Pid, in.port)
	os.WriteFile(filepath.Join(in.dataDir, "memnode.pid"), []byte(stale), 0o600)
	if r := in.run(nil, "status"); r.code != 3 || !strings.Contains(r.stdout, "not running") {
		t.Fatalf("status with a stale pid file: exit %d %q", r.code, r.stdout)
	}
	if r := in.run(nil, "stop"); r.code != 0 || !strings.Contains(r.stdout, "not running") {
		t.Fatalf("stop with a stale pid file: exit %d %q", r.code, r.stdout)
	}
	if other.ProcessState != nil {
		t.Fatal("stop signalled a process that is not memnode")
	}
	in.start()
	if r := in.run(nil, "status"); r.code != 0 || !strings.Contains(r.stdout, "running (pid") {
		t.Fatalf("status after start: exit %d %q", r.code, r.stdout)
	}
	// A second node on the same data dir refuses to run.
	if r := in.run(nil, "run"); r.code == 0 || !strings.Contains(r.stderr, "already running") {
		t.Fatalf("second run: exit %d %q", r.code, r.stderr)
	}
	in.mustRun(nil, "stop")
	if r := in.run(nil, "status"); r.code != 3 {
		t.Fatalf("status after stop: exit %d", r.code)
	}
}

// TestAPINeedsToken: the token file is private and the API refuses requests without it.
func TestAPINeedsToken(t *testing.T) {
	in := newInstance(t)
	in.start()
	fi, err := os.Stat(filepath.Join(in.dataDir, "token"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	for _, auth := range []string{"", "Bearer wrong", "Basic " + in.token()} {
		req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/api/status", in.port), nil)
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
	in := newInstance(t)
	var wg sync.WaitGroup
	results := make([]result, 5)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i] = in.run(nil, "start")
		}(i)
	}
	wg.Wait()
	pids := map[string]bool{}
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("start %d: exit %d: %s", i, r.code, r.stderr)
		}
		f := strings.Fields(r.stdout)
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

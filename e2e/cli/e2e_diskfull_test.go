package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
)

// tmpfsDataDir mounts a size-limited tmpfs and returns a data dir inside it. It needs root
// (CI runs tests as root) and skips with the reason otherwise.
func tmpfsDataDir(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs (tests run as root in CI)")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	return filepath.Join(mnt, "data")
}

// fill writes a file until the file system is full (ENOSPC), down to single bytes.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for chunk := 1 << 20; chunk > 0; chunk /= 4 {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill: %v", err)
				}
				break
			}
		}
	}
}

// TestFullDiskFailsLoudAndRecovers: a real node on a 20 MiB tmpfs that fills up. Events it
// acknowledged before are kept; new ones are refused with 507 and a clear status; hooks exit
// 2 with one stderr line at once (nothing could keep their event); once space is freed the
// node takes events again by itself and every acknowledged event is stored.
func TestFullDiskFailsLoudAndRecovers(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.DataDir = tmpfsDataDir(t, "20m")
	if err := os.MkdirAll(in.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	in.Start()
	proj := filepath.Join(t.TempDir(), "fullproj")
	os.MkdirAll(filepath.Join(proj, ".git"), 0o755)
	post := func(i int) (int, string) {
		body := e2ekit.ObservationEvent(fmt.Sprintf("full-%04d", i), "full-session", "fullproj", "make step-"+fmt.Sprint(i)+" "+strings.Repeat("x", 8<<10))
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/api/events", in.Port), bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+in.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("post %d: %v", i, err)
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(msg)
	}
	var acked []string
	for i := 0; i < 20; i++ {
		if code, msg := post(i); code != http.StatusOK {
			t.Fatalf("event %d before the disk filled: %d %s", i, code, msg)
		}
		acked = append(acked, fmt.Sprintf("full-%04d", i))
	}
	filler := filepath.Join(filepath.Dir(in.DataDir), "filler")
	fill(t, filler)

	// Keep sending: the queue's WAL may have room left for a few; then 507.
	refused := false
	for i := 20; i < 2000 && !refused; i++ {
		code, msg := post(i)
		switch code {
		case http.StatusOK:
			acked = append(acked, fmt.Sprintf("full-%04d", i))
		case http.StatusInsufficientStorage:
			refused = true
			if !strings.Contains(msg, "disk full") {
				t.Errorf("507 body %q does not say the disk is full", msg)
			}
		default:
			t.Fatalf("event %d on a full disk: %d %s", i, code, msg)
		}
	}
	if !refused {
		t.Fatal("the node never refused an event on a full disk")
	}
	storage := func() string {
		t.Helper()
		var st struct {
			Status struct {
				Storage apitype.StorageStatus `json:"storage"`
			} `json:"status"`
		}
		out := in.MustRun(nil, "status", "--json")
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("status --json: %v\n%s", err, out)
		}
		return st.Status.Storage.State
	}
	if s := storage(); s != apitype.StorageFull {
		t.Errorf("status storage = %q, want it to say full", s)
	}

	// Hooks: nothing can keep their event, so each exits 2 with one line, at once.
	for i := 0; i < 3; i++ {
		payload := fmt.Sprintf(`{"session_id":"full-hook","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make full-hook-%d"},"tool_response":{"stdout":"ok"}}`, proj, i)
		r := in.Run([]byte(payload), "hook", "claude-code", "observation")
		if r.Code != 2 {
			t.Fatalf("hook %d on a full disk: exit %d, want 2 (stderr %q)", i, r.Code, r.Stderr)
		}
		if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "memnode: ") {
			t.Fatalf("hook %d stderr %q: want exactly one memnode: line", i, r.Stderr)
		}
		if !json.Valid([]byte(r.Stdout)) {
			t.Fatalf("hook %d stdout %q is not JSON", i, r.Stdout)
		}
	}

	// Space returns: the node takes events again by itself.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	next := 5000
	testkit.WaitFor(t, "the node to take events again", 30*time.Second, func() bool {
		code, _ := post(next)
		if code == http.StatusOK {
			acked = append(acked, fmt.Sprintf("full-%04d", next))
			return true
		}
		next++
		return false
	})
	payload := fmt.Sprintf(`{"session_id":"full-hook","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make after-space"},"tool_response":{"stdout":"ok"}}`, proj)
	if r := in.Run([]byte(payload), "hook", "claude-code", "observation"); r.Code != 0 || r.Stderr != "" {
		t.Fatalf("hook after space returned: exit %d stderr %q", r.Code, r.Stderr)
	}
	db := in.Db()
	testkit.WaitFor(t, "every acknowledged event stored", 90*time.Second, func() bool {
		return in.Queued() == 0 && in.Count(db, "SELECT COUNT(*) FROM observations WHERE project = 'fullproj'") >= len(acked)+1
	})
	missing := 0
	for _, id := range acked {
		if in.Count(db, "SELECT COUNT(*) FROM seen_events WHERE event_id = ?", id) != 1 {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged events were lost", missing, len(acked))
	}
	if s := storage(); s != apitype.StorageOK {
		t.Errorf("status storage after recovery = %q, want ok", s)
	}
	t.Logf("acknowledged %d events around the full disk, all stored", len(acked))
}

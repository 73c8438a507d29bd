package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// squatter is a real process holding the instance's port, as uid (nil: this process's).
type squatter struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
}

func (s *squatter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(p)
}

func (s *squatter) seen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

func startSquatter(t *testing.T, port int, cred *syscall.Credential) *squatter {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Another uid cannot run the binary inside go test's private build dir: copy it into a
	// directory everyone can enter.
	dir, err := os.MkdirTemp("", "memnode-squatter")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "squatter")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &squatter{}
	s.cmd = exec.Command(bin)
	s.cmd.Dir = dir
	s.cmd.Env = []string{e2ekit.SquatterEnv + "=127.0.0.1:" + strconv.Itoa(port)}
	s.cmd.Stdout = s
	s.cmd.Stderr = os.Stderr
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	testkit.WaitFor(t, "the squatter to listen", 10*time.Second, func() bool {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return s
}

// TestPortSquatterGetsNothing is issue 11's first "done when": a listener on the node's
// port run by another uid, and one run by the same uid that does not hold the token,
// receive neither the token nor any event from real hook processes; the context hook never
// injects their text; `memnode status` says the port is taken by something else.
func TestPortSquatterGetsNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		cred func(*testing.T) *syscall.Credential
		// challenged: the squatter gets the proof challenge; another uid is refused before
		// (Linux: the port's owner in /proc/net/tcp) and gets no request at all.
		challenged bool
	}{
		{"another uid", e2ekit.Nobody, false},
		{"same uid without the token", func(*testing.T) *syscall.Credential { return nil }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cred := c.cred(t)
			in := e2ekit.NewInstance(t)
			sq := startSquatter(t, in.Port, cred)
			taken := fmt.Sprintf("port %d is taken by something else", in.Port)

			r := in.Run(nil, "status")
			if r.Code != 3 || !strings.Contains(r.Stdout, "not running") || !strings.Contains(r.Stdout, taken) {
				t.Fatalf("status with the node down: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}

			// Real hooks: the first starts the node, which serves its socket (the port is
			// taken) and gets every event.
			proj := filepath.Join(in.DataDir, "proj")
			os.MkdirAll(proj, 0o700)
			marker := "marker-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			prompt := `{"session_id":"s1","transcript_path":"","cwd":` + e2ekit.JsonString(proj) + `,"hook_event_name":"UserPromptSubmit","prompt":"remember ` + marker + `"}`
			if r := in.RunLean([]byte(prompt), "hook", "claude-code", "session-init"); r.Code != 0 {
				t.Fatalf("prompt hook: exit %d: %s", r.Code, r.Stderr)
			}
			db := in.Db()
			testkit.WaitFor(t, "the prompt in the node's database", 20*time.Second, func() bool {
				return in.Count(db, "SELECT COUNT(*) FROM prompts WHERE text LIKE ?", "%"+marker+"%") == 1
			})
			if ctx := e2ekit.ContextFor(t, in, proj); strings.Contains(ctx, "SQUATTER") {
				t.Fatalf("context hook injected the squatter's text: %q", ctx)
			}

			// A client that asks for TCP meets the squatter: it sends nothing, the event is
			// spooled and the node replays it from the spool.
			in.Extra = append(in.Extra, "MEMNODE_TRANSPORT=tcp")
			tcpMarker := marker + "-tcp"
			prompt = strings.ReplaceAll(prompt, marker, tcpMarker)
			if r := in.RunLean([]byte(prompt), "hook", "claude-code", "session-init"); r.Code != 0 {
				t.Fatalf("tcp prompt hook: exit %d: %s", r.Code, r.Stderr)
			}
			if r := in.Run([]byte(`{"session_id":"s2","transcript_path":"","cwd":`+e2ekit.JsonString(proj)+`,"hook_event_name":"SessionStart","source":"startup"}`), "hook", "claude-code", "context"); r.Code != 0 || strings.Contains(r.Stdout, "SQUATTER") {
				t.Fatalf("tcp context hook: exit %d: %q", r.Code, r.Stdout)
			}
			testkit.WaitFor(t, "the spooled tcp prompt in the node's database", 20*time.Second, func() bool {
				return in.Count(db, "SELECT COUNT(*) FROM prompts WHERE text LIKE ?", "%"+tcpMarker+"%") == 1
			})
			in.Extra = nil

			r = in.Run(nil, "status")
			if r.Code != 0 || !strings.Contains(r.Stdout, "running") || !strings.Contains(r.Stdout, "tcp:         off: "+taken) {
				t.Fatalf("status with the node up: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}

			token, err := os.ReadFile(filepath.Join(in.DataDir, "token"))
			if err != nil {
				t.Fatal(err)
			}
			seen := sq.seen()
			for _, bad := range []string{strings.TrimSpace(string(token)), marker, "Authorization", "/api/"} {
				if strings.Contains(seen, bad) {
					t.Errorf("the squatter received %q:\n%s", bad, seen)
				}
			}
			// What it may see: the challenges of status and of the tcp hook, nothing else.
			sc := bufio.NewScanner(strings.NewReader(seen))
			for sc.Scan() {
				if l := sc.Text(); strings.HasPrefix(l, "REQUEST ") && l != "REQUEST GET /health" {
					t.Errorf("the squatter got %s", l)
				}
			}
			if got := strings.Contains(seen, "REQUEST GET /health"); got != (c.challenged || runtime.GOOS != "linux") {
				t.Errorf("squatter challenged: %v, want %v:\n%s", got, c.challenged, seen)
			}
		})
	}
}

// TestNothingReadableByOthers is issue 11's permissions "done when": a pre-existing 0755
// data dir (with an older version's 0644 files), and one created by a failed `embed pull`:
// after start and a hook event, no file under it is readable by others.
func TestNothingReadableByOthers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, in *e2ekit.Instance)
	}{
		{"pre-existing 0755 dir", func(t *testing.T, in *e2ekit.Instance) {
			if err := os.Chmod(in.DataDir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"settings.json", "memnode.db"} {
				if err := os.WriteFile(filepath.Join(in.DataDir, f), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			os.WriteFile(filepath.Join(in.DataDir, "settings.json"), []byte("{}"), 0o644)
			if err := os.Mkdir(filepath.Join(in.DataDir, "models"), 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"created by a failed embed pull", func(t *testing.T, in *e2ekit.Instance) {
			in.DataDir = filepath.Join(in.DataDir, "new")
			// A hub that answers nothing useful: the pull fails after creating what it needs.
			hub := http.Server{Handler: http.NotFoundHandler()}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			go hub.Serve(ln)
			defer hub.Close()
			in.Extra = []string{"HF_ENDPOINT=http://" + ln.Addr().String(), "UMASK_NOTE=shell umask 022"}
			if r := in.Run(nil, "embed", "pull"); r.Code == 0 {
				t.Fatalf("embed pull against an empty hub succeeded: %s", r.Stderr)
			}
			in.Extra = nil
			fi, err := os.Stat(in.DataDir)
			if err != nil {
				t.Fatalf("embed pull did not create the data dir: %v", err)
			}
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("data dir made by embed pull: %v", fi.Mode().Perm())
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			old := syscall.Umask(0o022) // the shell's usual umask, inherited by memnode
			defer syscall.Umask(old)
			in := e2ekit.NewInstance(t)
			c.setup(t, in)
			in.Start()
			proj := filepath.Join(t.TempDir(), "proj")
			os.MkdirAll(proj, 0o700)
			prompt := `{"session_id":"s1","transcript_path":"","cwd":` + e2ekit.JsonString(proj) + `,"hook_event_name":"UserPromptSubmit","prompt":"a private thought"}`
			if r := in.RunLean([]byte(prompt), "hook", "claude-code", "session-init"); r.Code != 0 {
				t.Fatalf("hook: exit %d: %s", r.Code, r.Stderr)
			}
			db := in.Db()
			testkit.WaitFor(t, "the prompt stored", 20*time.Second, func() bool {
				return in.Count(db, "SELECT COUNT(*) FROM prompts") == 1
			})
			out := filepath.Join(in.DataDir, "export.jsonl")
			if err := os.WriteFile(out, nil, 0o644); err != nil { // an existing file keeps its mode on open
				t.Fatal(err)
			}
			in.MustRun(nil, "export", "--out", out)
			n := 0
			err := filepath.WalkDir(in.DataDir, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				fi, err := d.Info()
				if err != nil {
					return err
				}
				n++
				if fi.Mode().Perm()&0o077 != 0 {
					t.Errorf("%s is %v: readable by others", p, fi.Mode().Perm())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if n < 8 { // dir, db + wal + shm, queue db + wal + shm, token, …
				t.Fatalf("only %d entries under the data dir: the node did not run", n)
			}
		})
	}
}

// TestStopSignalsOnlyTheLockHolder: a stale pid file naming another data dir's node (pids
// are reused; data dirs are copied) must not make `memnode stop` SIGTERM that node.
func TestStopSignalsOnlyTheLockHolder(t *testing.T) {
	t.Parallel()
	a, b := e2ekit.NewInstance(t), e2ekit.NewInstance(t)
	b.Start()
	pidB, err := os.ReadFile(filepath.Join(b.DataDir, "memnode.pid"))
	if err != nil {
		t.Fatal(err)
	}
	// a's node ran once (it has a lock file and a token) and is down now.
	a.Start()
	a.MustRun(nil, "stop")
	if err := os.WriteFile(filepath.Join(a.DataDir, "memnode.pid"), pidB, 0o600); err != nil {
		t.Fatal(err)
	}
	r := a.Run(nil, "stop")
	if r.Code != 0 || !strings.Contains(r.Stdout, "not running") {
		t.Fatalf("stop with b's pid in a's pid file: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := b.Run(nil, "status"); r.Code != 0 || !strings.Contains(r.Stdout, "running (pid") {
		t.Fatalf("b's node was stopped by a's stop: exit %d\n%s", r.Code, r.Stdout)
	}
	// While a's node runs, b's pid in a's pid file is refused too (the lock names a's pid).
	a.Start()
	if err := os.WriteFile(filepath.Join(a.DataDir, "memnode.pid"), pidB, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := a.Run(nil, "stop"); r.Code == 0 || !strings.Contains(r.Stderr, "lock is held by") {
		t.Fatalf("stop with a foreign pid while a runs: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := b.Run(nil, "status"); r.Code != 0 {
		t.Fatalf("b's node was stopped: exit %d\n%s", r.Code, r.Stdout)
	}
	b.MustRun(nil, "stop")
}

package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// check is one line of `memnode doctor --json` (cmd/memnode/doctor.go's check).
type check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// doctorReport is `memnode doctor --json`.
type doctorReport struct {
	OK     bool    `json:"ok"`
	Checks []check `json:"checks"`
}

// doctor runs `memnode doctor --json` and `memnode doctor`, checks that both agree on the
// exit code (0 healthy, 1 not), and returns the failed checks.
func doctor(t *testing.T, in *e2ekit.Instance) (failed []check, text string) {
	t.Helper()
	r := in.Run(nil, "doctor", "--json")
	var rep doctorReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("doctor --json: exit %d, %v\n%s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	for _, c := range rep.Checks {
		if !c.OK {
			failed = append(failed, c)
		}
	}
	plain := in.Run(nil, "doctor")
	if want := map[bool]int{true: 0, false: 1}[rep.OK]; r.Code != want || plain.Code != want || rep.OK != (len(failed) == 0) {
		t.Errorf("doctor: ok %v with %d failed checks, exit %d (text: %d)", rep.OK, len(failed), r.Code, plain.Code)
	}
	return failed, plain.Stdout
}

// wantProblem fails unless exactly the checks named in want failed, each with its fix.
func wantProblem(t *testing.T, scenario string, failed []check, text string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, c := range failed {
		got[c.Name] += c.Fix + ";"
	}
	for name, fix := range want {
		if !strings.Contains(got[name], fix) {
			t.Errorf("%s: check %q should fail with fix %q; failed: %+v\n%s", scenario, name, fix, failed, text)
		}
		if !strings.Contains(text, fix) {
			t.Errorf("%s: the text report does not name the fix %q:\n%s", scenario, fix, text)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: check %q failed unexpectedly: %+v\n%s", scenario, name, failed, text)
		}
	}
}

// TestDoctor runs the real binary's doctor on a healthy install, then with no hooks, hooks
// running a deleted binary, the node down, a 0755 data dir and a full disk (a 2 MiB tmpfs):
// each problem is named with the command that fixes it, and exit 1; healthy is exit 0.
func TestDoctor(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t) // HOME is the data dir
	in.Extra = append(in.Extra, "MEMNODE_KEYS_BACKEND=file", "MEMNODE_KEYS_PASSPHRASE=doctor")

	// no hooks (node running)
	in.Start()
	failed, text := doctor(t, in)
	wantProblem(t, "no hooks", failed, text, map[string]string{"agents": "memnode install"})

	// healthy
	in.MustRun(nil, "install", "claude-code")
	failed, text = doctor(t, in)
	wantProblem(t, "healthy", failed, text, nil)
	if !strings.Contains(text, "claude-code: hooks and MCP server") || !strings.Contains(text, "memnode is working") ||
		!strings.Contains(text, "claude-code: none since the node started") {
		t.Errorf("healthy report:\n%s", text)
	}
	// An event of the agent reaches the node: doctor says when, from the node, not from
	// the newest stored record.
	payload := fmt.Sprintf(`{"session_id":"doctor-hook","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"make doctor"},"tool_response":{"stdout":"ok"}}`, in.DataDir)
	if r := in.Run([]byte(payload), "hook", "claude-code", "observation"); r.Code != 0 {
		t.Fatalf("hook: exit %d: %s", r.Code, r.Stderr)
	}
	if _, text = doctor(t, in); !regexp.MustCompile(`claude-code: received \d+s ago`).MatchString(text) {
		t.Errorf("after a hook event, doctor does not say it was received:\n%s", text)
	}

	// hooks, but the MCP server entry removed (the user edited ~/.claude.json)
	mcpFile := filepath.Join(in.DataDir, ".claude.json")
	if err := os.WriteFile(mcpFile, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	failed, text = doctor(t, in)
	wantProblem(t, "no MCP server", failed, text, map[string]string{"mcp": "memnode install claude-code"})
	in.MustRun(nil, "install", "claude-code")

	// a 0755 data dir
	if err := os.Chmod(in.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	failed, text = doctor(t, in)
	wantProblem(t, "0755 data dir", failed, text, map[string]string{"data dir": "chmod 700 " + in.DataDir})
	os.Chmod(in.DataDir, 0o700)

	// hooks running a binary that was deleted (an upgrade that moved it)
	moved := filepath.Join(t.TempDir(), "memnode")
	b, err := os.ReadFile(e2ekit.MemnodeBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(moved, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(moved, "install", "claude-code")
	cmd.Env, cmd.Dir = in.Env(), in.DataDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("install from %s: %v\n%s", moved, err, out)
	}
	os.Remove(moved)
	failed, text = doctor(t, in)
	wantProblem(t, "deleted binary", failed, text, map[string]string{"agents": "memnode install claude-code"})
	if !strings.Contains(text, moved) {
		t.Errorf("the report does not name the deleted binary %s:\n%s", moved, text)
	}
	in.MustRun(nil, "install", "claude-code")

	// node down
	in.MustRun(nil, "stop")
	failed, text = doctor(t, in)
	wantProblem(t, "node down", failed, text, map[string]string{"node": "memnode start"})

	// a full disk
	if os.Geteuid() != 0 {
		t.Skip("full disk: mounting a tmpfs needs root; skipped")
	}
	mnt := t.TempDir()
	if err := mountTmpfs(mnt, "size=2m,mode=0700"); err != nil {
		t.Skipf("full disk: cannot mount a tmpfs here (%v); skipped", err)
	}
	t.Cleanup(func() { unmountTmpfs(mnt) })
	full := filepath.Join(mnt, "filler")
	f, err := os.Create(full)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(make([]byte, 4<<20)) // fails with ENOSPC at 2 MiB: that is the point
	f.Close()
	onFull := &e2ekit.Instance{Tb: t, DataDir: filepath.Join(mnt, "data"), Port: e2ekit.FreePort(t), Extra: in.Extra}
	if err := os.Mkdir(onFull.DataDir, 0o700); err != nil && !os.IsExist(err) {
		t.Logf("mkdir on the full disk: %v", err) // doctor then looks at the nearest parent
	}
	failed, text = doctor(t, onFull)
	wantProblem(t, "full disk", failed, text, map[string]string{"disk": "free space", "agents": "memnode install", "node": "memnode start"})
}

package agents

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
)

// TestImportFromOpenCode runs one session of the real OpenCode (npm, headless, against a
// scripted model server) with memnode's plugin recording it live on one node — a prompt
// with a private part whose tools read, fail to read, edit, run a failing and a passing
// command and echo a secret inside <private>, then a wholly private prompt in the same
// session — and imports it on another node from OpenCode's data dir alone (memnode runs
// `opencode db` to list the sessions and `opencode export`), then from a folder of
// exports: the same records, nothing stored twice, no private or secret byte stored on
// either node. Without opencode on PATH the import says so in one line.
func TestImportFromOpenCode(t *testing.T) {
	t.Parallel()
	opencode := installCLI(t, "opencode-ai", openCodeVersion, "opencode")
	var next agentcli.Script
	rig := newAgentRig(t, agentFiles(t), &agentcli.OpenAIChat{},
		agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn { return next.Next(r) }))
	app := filepath.Join(rig.project, e2ekit.AgentFile)
	next = agentcli.Sequence(
		agentcli.Turn{Text: "Let me look at the code.", Calls: []agentcli.Call{{Name: "read", Args: map[string]any{"filePath": app}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "read", Args: map[string]any{"filePath": filepath.Join(rig.project, "NOTES.md")}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "edit", Args: map[string]any{"filePath": app, "oldString": e2ekit.AgentOld, "newString": e2ekit.AgentNew}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "bash", Args: map[string]any{"command": e2ekit.AgentFailCmd, "description": "Run the greeting tests"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "bash", Args: map[string]any{"command": e2ekit.AgentPassCmd + " # <private>SECRET-eyJhbGciOi</private>", "description": "Run the tests"}}}},
		agentcli.Turn{Text: e2ekit.AgentAnswer1},
		// the wholly private prompt, in the same session
		agentcli.Turn{Calls: []agentcli.Call{{Name: "bash", Args: map[string]any{"command": "echo private-turn-tool", "description": "Private"}}}},
		agentcli.Turn{Text: "Noted the private request."},
	)
	writeOpenCodeConfig(t, rig)
	rig.MustRun(nil, "install", "opencode")
	rig.Start()
	t.Cleanup(func() { rig.Run(nil, "stop") })
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(opencode, args...)
		cmd.Dir = rig.project
		cmd.Env = rig.env()
		out := runCLI(t, 3*time.Minute, cmd)
		if out.Code != 0 {
			t.Fatalf("opencode %s: exit %d\nstdout: %.4000s\nstderr: %.4000s", args[0], out.Code, out.Stdout, out.Stderr)
		}
		return out.Stdout
	}
	run("run", "--format", "json", agentPrompt1)
	var listed []struct {
		ID string `json:"id"`
	}
	list := run("session", "list", "--format", "json", "--pure")
	if err := json.Unmarshal([]byte(list), &listed); err != nil || len(listed) != 1 {
		t.Fatalf("opencode session list: %v %d\n%s", err, len(listed), list)
	}
	run("run", "--format", "json", "--session", listed[0].ID, "<private>SECRET-only-private-prompt do not store</private>")
	// A folder of exports (`opencode export ID > ID.json`) imports as it is.
	exports := t.TempDir()
	if err := os.WriteFile(filepath.Join(exports, listed[0].ID+".json"), []byte(run("export", "--pure", listed[0].ID)), 0o600); err != nil {
		t.Fatal(err)
	}

	imp := e2ekit.NewInstance(t)
	imp.Start()
	dataDir := filepath.Join(rig.home, ".local", "share", "opencode")
	// Without opencode on PATH: one line saying what to do.
	imp.Extra = append(imp.Extra, "HOME="+rig.home, "PATH="+filepath.Dir(e2ekit.MemnodeBin)+":/usr/bin:/bin")
	if r := imp.Run(nil, "import", "--from-opencode", dataDir); r.Code == 0 || !strings.Contains(r.Stderr, "opencode") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
		t.Errorf("import without opencode on PATH: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	imp.Extra = append(imp.Extra, "PATH="+filepath.Dir(opencode)+":/usr/bin:/bin")
	imp.Extra = append(imp.Extra, openCodeEnv...)
	// memnode runs opencode itself here (`opencode db`, `opencode export`): a CLI run too.
	release := cliSlots.take(t, "memnode import --from-opencode (opencode db, opencode export)")
	defer release()
	for i := 0; i < 2; i++ {
		r := imp.Run(nil, "import", "--from-opencode", dataDir)
		if r.Code != 0 || !strings.Contains(r.Stdout, "imported 1 OpenCode sessions") {
			t.Fatalf("import %d: exit %d\n%s%s", i+1, r.Code, r.Stdout, r.Stderr)
		}
	}
	release()
	if out := imp.MustRun(nil, "import", "--from-opencode", exports, "--quiet"); !strings.Contains(out, "imported 1 OpenCode sessions") {
		t.Errorf("import of a folder of exports said %q", out)
	}
	settled := func(in *e2ekit.Instance) string {
		var last string
		testkit.WaitForState(t, "the records to settle", 90*time.Second, func() (bool, string) {
			cur := e2ekit.StoredRecords(t, in)
			ok := in.Queued() == 0 && cur == last && strings.Contains(cur, "node test_app.js")
			last = cur
			return ok, cur
		})
		return last
	}
	want, got := settled(rig.Instance), settled(imp)
	if got != want {
		t.Errorf("the import stored other records than the live plugin:\nlive:\n%s\nimport:\n%s", want, got)
	}
	for _, needle := range []string{"NOTES.md", e2ekit.AgentFailCmd, "opencode"} {
		if !strings.Contains(want, needle) {
			t.Errorf("the session's records lack %q:\n%s", needle, want)
		}
	}
	for _, needle := range []string{"private-turn-tool", "Noted the private request"} {
		if strings.Contains(got, needle) || strings.Contains(want, needle) {
			t.Errorf("the wholly private turn was stored (%q):\n%s", needle, got)
		}
	}
	for _, in := range []*e2ekit.Instance{rig.Instance, imp} {
		e2ekit.GrepDataDir(t, in.DataDir, "SECRET-")
	}
}

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// TestImportFromClaudeCode: a generated Claude Code session (its transcript and the hook
// calls Claude Code made, both in the captured fixture format) recorded by live hooks on one
// node, and imported from the transcript alone on another, gives the same records; a
// second import stores nothing new; no private or secret byte is stored.
func TestImportFromClaudeCode(t *testing.T) {
	t.Parallel()
	proj := e2ekit.GitDir(t, "demo-app")
	sid := "5f0c9a3e-1b2d-4c7e-9f10-aa11bb22cc33"
	steps := e2ekit.GenClaudeSession(sid, proj, time.Date(2026, 11, 28, 9, 14, 0, 0, time.UTC))

	// Live: Claude Code writes the transcript as it goes and runs the hooks.
	live := e2ekit.NewInstance(t)
	live.Start()
	transcript := filepath.Join(t.TempDir(), sid+".jsonl")
	for _, s := range steps {
		e2ekit.AppendJSONL(t, transcript, s.Lines)
		s.Hook["transcript_path"] = transcript
		payload, _ := json.Marshal(s.Hook)
		if r := live.RunLean(payload, "hook", "claude-code", s.Event); r.Code != 0 {
			t.Fatalf("live %s hook: exit %d %s", s.Event, r.Code, r.Stderr)
		}
	}

	// Import: the same transcript where Claude Code keeps it.
	imp := e2ekit.NewInstance(t)
	imp.Start()
	projects := filepath.Join(t.TempDir(), "projects")
	dst := filepath.Join(projects, "-home-dev-demo-app", sid+".jsonl")
	os.MkdirAll(filepath.Join(filepath.Dir(dst), "memory"), 0o700)
	os.WriteFile(dst, e2ekit.ReadFile(t, transcript), 0o600)
	// Memory files: the user's CLAUDE.md (global), the project's, its auto memory.
	os.WriteFile(filepath.Join(filepath.Dir(projects), "CLAUDE.md"), []byte("# Me\n\n- I use pnpm, never npm\n- <private>SECRET-personal-rule</private>\n"), 0o600)
	os.WriteFile(filepath.Join(proj, "CLAUDE.md"), []byte("# demo-app\n\nBuild notes.\n\n- Run make lint before every commit\n```sh\n- not an entry\n```\n"), 0o600)
	os.WriteFile(filepath.Join(filepath.Dir(dst), "memory", "MEMORY.md"), []byte("- The auth tests need REDIS_URL <private>SECRET-redis-pass</private>\n"), 0o600)
	out := imp.MustRun(nil, "import", "--from-claude-code", projects)
	if !strings.Contains(out, "imported 1 Claude Code sessions") || !strings.Contains(out, "3 entries saved as notes, 0 were already there") {
		t.Errorf("import said %q", out)
	}
	notes := func() string {
		var b strings.Builder
		rows, err := imp.Db().Query("SELECT project, narrative FROM observations WHERE tool_name = 'save_memory' ORDER BY project, narrative")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var p, n string
			rows.Scan(&p, &n)
			b.WriteString(p + ": " + n + "\n")
		}
		return b.String()
	}
	wantNotes := "(global): I use pnpm, never npm\ndemo-app: Run make lint before every commit\ndemo-app: The auth tests need REDIS_URL\n"
	if got := notes(); got != wantNotes {
		t.Errorf("memory-file notes:\n%s\nwant:\n%s", got, wantNotes)
	}

	settled := func(in *e2ekit.Instance) string {
		var last string
		testkit.WaitForState(t, "the records to settle", 60*time.Second, func() (bool, string) {
			cur := e2ekit.StoredRecords(t, in)
			ok := in.Queued() == 0 && cur == last && strings.Contains(cur, "refresh")
			last = cur
			return ok, cur
		})
		return last
	}
	want, got := settled(live), settled(imp)
	if got != want {
		t.Errorf("the import stored other records than live hooks:\nlive:\n%s\nimport:\n%s", want, got)
	}
	if !strings.Contains(want, "go test ./internal/auth/...") || !strings.Contains(want, "refresh endpoint") {
		t.Errorf("the session's records are missing:\n%s", want)
	}

	// Twice: nothing new.
	if out := imp.MustRun(nil, "import", "--from-claude-code", projects, "--quiet"); !strings.Contains(out, "0 entries saved as notes, 3 were already there") {
		t.Errorf("second import said %q", out)
	}
	if again := settled(imp); again != got {
		t.Errorf("a second import changed the records:\n%s", again)
	}
	if n := notes(); n != wantNotes {
		t.Errorf("a second import changed the notes:\n%s", n)
	}

	// memnode install claude-code offers the import once when sessions are on disk.
	fresh := e2ekit.NewInstance(t) // HOME is its data dir
	os.MkdirAll(filepath.Join(fresh.DataDir, ".claude", "projects", "-w-app"), 0o700)
	os.WriteFile(filepath.Join(fresh.DataDir, ".claude", "projects", "-w-app", "s1.jsonl"), []byte(`{"type":"user","sessionId":"s1","message":{"content":"hi"}}`+"\n"), 0o600)
	if out := fresh.MustRun(nil, "install", "claude-code"); !strings.Contains(out, "Claude Code has 1 past sessions on this machine: 'memnode import --from-claude-code'") {
		t.Errorf("install did not offer the import:\n%s", out)
	}
	if out := fresh.MustRun(nil, "install", "claude-code"); strings.Contains(out, "import --from-claude-code") {
		t.Errorf("install offered the import twice:\n%s", out)
	}
	for _, in := range []*e2ekit.Instance{live, imp} {
		e2ekit.GrepDataDir(t, in.DataDir, "SECRET-")
	}
}

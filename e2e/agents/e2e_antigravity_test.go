package agents

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/platform/antigravity"
)

// TestAntigravityThroughTheHookBinary: no Antigravity CLI can run here, so its documented
// session (testdata/fixtures/antigravity) goes through the lean hook binary, each payload
// through the memnode hook its agy event is installed for, against a real node: the calls
// are recorded from PreToolUse, the failed run from PostToolUse, the prompt and the answer
// from the transcript; after the summary the node writes the project's GEMINI.md (never the
// private text); every answer is the neutral {}; uninstall removes the named hook, the MCP
// entry and the GEMINI.md memnode created.
func TestAntigravityThroughTheHookBinary(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	proj := filepath.Join(t.TempDir(), "demo-app")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	fixtures := filepath.Join("..", "..", antigravity.Platform().Fixtures)
	b, err := os.ReadFile(filepath.Join(fixtures, "transcript_full.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(t.TempDir(), "transcript_full.jsonl")
	if err := os.WriteFile(transcript, []byte(strings.ReplaceAll(string(b), "/home/dev/demo-app", proj)), 0o600); err != nil {
		t.Fatal(err)
	}
	out := in.MustRun(nil, "install", "antigravity")
	hooksJSON := filepath.Join(in.DataDir, ".gemini", "config", "hooks.json")
	if !strings.Contains(out, hooksJSON) {
		t.Fatalf("install output does not name %s:\n%s", hooksJSON, out)
	}

	f, err := os.Open(filepath.Join(fixtures, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Event   string         `json:"event"`
			Payload map[string]any `json:"payload"`
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(sc.Text(), "/home/dev/demo-app", proj)), &rec); err != nil {
			t.Fatal(err)
		}
		rec.Payload["transcriptPath"] = transcript
		payload, _ := json.Marshal(rec.Payload)
		for _, spec := range antigravity.HookSpecs() {
			if spec.Event != rec.Event {
				continue
			}
			r := in.RunLean(payload, "hook", "antigravity", spec.Sub)
			if r.Code != 0 || strings.TrimSpace(r.Stdout) != "{}" {
				t.Fatalf("hook antigravity %s (%s): exit %d, stdout %q, stderr %s", spec.Sub, rec.Event, r.Code, r.Stdout, r.Stderr)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}

	gemini := filepath.Join(proj, "GEMINI.md")
	read := func() string { b, _ := os.ReadFile(gemini); return string(b) }
	testkit.WaitFor(t, "GEMINI.md with the session's memory", 30*time.Second, func() bool {
		return strings.Contains(read(), "<memnode-context>") && strings.Contains(read(), "app.py")
	})
	if got := read(); strings.Contains(got, "SECRET-tok-42") {
		t.Fatalf("the session's private text reached GEMINI.md:\n%s", got)
	}
	e2ekit.GrepDataDir(t, in.DataDir, "SECRET-tok-42")
	var tools []string
	rows, err := in.Db().Query(`SELECT tool_name || ':' || title FROM observations ORDER BY created_at, rowid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		tools = append(tools, s)
	}
	rows.Close()
	all := strings.Join(tools, "\n")
	for _, want := range []string{"Read:", "Edit:", "Bash:", "MultiEdit:"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s observation recorded:\n%s", want, all)
		}
	}
	// The failed step keeps its command: the node pairs the failure with the call of the
	// same tool use ID (pipeline/recent.go), and nothing says the run passed.
	if !strings.Contains(all, "Bash:Tests fail: python -m pytest -q") || strings.Contains(all, "Tests pass") {
		t.Errorf("the failed run (PostToolUse with an error) is not recorded as a failure of its command:\n%s", all)
	}
	if strings.Contains(all, "list_permissions") || strings.Contains(all, "mcp__memnode") {
		t.Errorf("bookkeeping recorded:\n%s", all)
	}
	var prompts int
	if err := in.Db().QueryRow(`SELECT count(*) FROM prompts WHERE text LIKE '%greeting in app.py%'`).Scan(&prompts); err != nil || prompts != 1 {
		t.Errorf("prompts from the transcript = %d, %v; want 1 (once per prompt, not per model call)", prompts, err)
	}

	in.MustRun(nil, "uninstall", "antigravity")
	for _, p := range []string{gemini, hooksJSON, filepath.Join(in.DataDir, ".gemini", "config", "mcp_config.json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind after uninstall: %v", p, err)
		}
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/testkit"
)

// ccStep is one moment of a generated Claude Code session: the transcript lines Claude Code
// writes (in its transcript format, as captured in ../shared/fixtures/claude-code) and the
// hook call it makes then (memnode event and stdin payload, as captured there too).
type ccStep struct {
	lines []map[string]any
	event string
	hook  map[string]any
}

// genClaudeSession generates one session in project dir cwd: three turns — a prompt with a
// private part whose tools read, edit, pass and fail and send a secret inside <private>; a
// wholly private prompt whose tool call and answer repeat it; a plain follow-up.
func genClaudeSession(sid, cwd string, start time.Time) []ccStep {
	n := 0
	at := func() string { n++; return start.Add(time.Duration(n) * time.Second).UTC().Format(time.RFC3339Nano) }
	base := func(h map[string]any) map[string]any {
		h["session_id"], h["cwd"], h["permission_mode"] = sid, cwd, "default"
		return h
	}
	user := func(content any) map[string]any {
		return map[string]any{"type": "user", "sessionId": sid, "uuid": fmt.Sprintf("u%d", n), "timestamp": at(), "cwd": cwd,
			"message": map[string]any{"role": "user", "content": content}}
	}
	assistant := func(parts ...map[string]any) map[string]any {
		return map[string]any{"type": "assistant", "sessionId": sid, "uuid": fmt.Sprintf("a%d", n), "timestamp": at(), "cwd": cwd,
			"message": map[string]any{"role": "assistant", "content": parts}}
	}
	var steps []ccStep
	prompt := func(text string) {
		steps = append(steps, ccStep{lines: []map[string]any{user(text)}, event: "session-init",
			hook: base(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": text})})
	}
	tool := func(id, name string, input map[string]any, resp any, failed string) {
		content := fmt.Sprint(resp)
		if b, err := json.Marshal(resp); err == nil && failed == "" {
			content = string(b)
		}
		result := map[string]any{"type": "tool_result", "tool_use_id": id, "content": content}
		h := base(map[string]any{"hook_event_name": "PostToolUse", "tool_name": name, "tool_use_id": id, "tool_input": input, "tool_response": resp})
		res := user([]map[string]any{result})
		if failed != "" {
			result["content"], result["is_error"] = failed, true
			h = base(map[string]any{"hook_event_name": "PostToolUseFailure", "tool_name": name, "tool_use_id": id, "tool_input": input, "error": failed})
			res["toolUseResult"] = "Error: " + failed
		} else {
			res["toolUseResult"] = resp
		}
		steps = append(steps, ccStep{lines: []map[string]any{assistant(map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}), res},
			event: "observation", hook: h})
	}
	answer := func(text string) {
		steps = append(steps, ccStep{lines: []map[string]any{assistant(map[string]any{"type": "text", "text": text})}, event: "summarize",
			hook: base(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false})})
	}
	mw := filepath.Join(cwd, "internal/auth/middleware.go")
	steps = append(steps, ccStep{event: "context", hook: base(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})})
	prompt("The login endpoint returns 500 when the JWT has expired. Find out why and fix it. <private>staging password is SECRET-hunter2</private>")
	tool("toolu_01Read", "Read", map[string]any{"file_path": mw},
		map[string]any{"type": "text", "file": map[string]any{"filePath": mw, "content": "package auth\n\nfunc middleware() { claims, _ := parse(tok) }\n", "numLines": 3, "startLine": 1, "totalLines": 3}}, "")
	tool("toolu_02Edit", "Edit", map[string]any{"file_path": mw, "old_string": "claims, _ := parse(tok)", "new_string": "claims, err := parse(tok)\n\tif errors.Is(err, jwt.ErrTokenExpired) {\n\t\treturn unauthorized(w)\n\t}"},
		map[string]any{"filePath": mw, "oldString": "claims, _ := parse(tok)", "newString": "claims, err := parse(tok)", "structuredPatch": []any{}}, "")
	tool("toolu_03Bash", "Bash", map[string]any{"command": "go test ./internal/auth/...", "description": "Run auth tests"},
		map[string]any{"stdout": "ok  \tdemo-app/internal/auth\t0.412s\n", "stderr": "", "interrupted": false, "isImage": false}, "")
	tool("toolu_04Bash", "Bash", map[string]any{"command": "curl -s -H 'Authorization: Bearer <private>SECRET-eyJhbGciOi</private>' localhost:8080/login", "description": "Probe login"},
		map[string]any{"stdout": "{\"error\":\"token expired\"}", "stderr": "", "interrupted": false, "isImage": false}, "")
	tool("toolu_05Bash", "Bash", map[string]any{"command": "go vet ./internal/refresh/...", "description": "Vet refresh"}, nil,
		"Exit code 1\ninternal/refresh/refresh.go:12: claims declared and not used")
	answer("Fixed: the middleware ignored the parse error, so an expired JWT gave nil claims and a 500. It now returns 401 for jwt.ErrTokenExpired. Next: the refresh endpoint has the same pattern.")
	prompt("<private>SECRET-only-private-prompt do not store</private>")
	tool("toolu_06Bash", "Bash", map[string]any{"command": "grep -rn hunter internal/", "description": "search"},
		map[string]any{"stdout": "internal/x.go:1: hunter\n", "stderr": "", "interrupted": false, "isImage": false}, "")
	answer("Noted the private request (SECRET-only-private-prompt); nothing else to do.")
	prompt("Now apply the same fix to the refresh endpoint.")
	tool("toolu_07Edit", "Edit", map[string]any{"file_path": filepath.Join(cwd, "internal/refresh/refresh.go"), "old_string": "claims, _ :=", "new_string": "claims, err :="},
		map[string]any{"filePath": filepath.Join(cwd, "internal/refresh/refresh.go"), "oldString": "claims, _ :=", "newString": "claims, err :=", "structuredPatch": []any{}}, "")
	answer("The refresh endpoint now checks the parse error too.")
	steps = append(steps, ccStep{event: "session-end", hook: base(map[string]any{"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})})
	return steps
}

func appendJSONL(t *testing.T, path string, lines []map[string]any) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		b, _ := json.Marshal(l)
		f.Write(append(b, '\n'))
	}
}

// storedRecords renders what a node stored, without IDs, times and origins: the records
// live hooks and an import of the same session must agree on.
func storedRecords(t *testing.T, in *instance) string {
	t.Helper()
	db := in.db()
	var b strings.Builder
	for _, q := range []string{
		"SELECT id, project, platform, status FROM sessions ORDER BY id",
		"SELECT session_id, project, prompt_number, text FROM prompts ORDER BY session_id, prompt_number",
		"SELECT session_id, project, type, title, subtitle, narrative, facts, concepts, files_read, files_modified, tool_name, prompt_number FROM observations WHERE tool_name != 'save_memory' ORDER BY session_id, prompt_number, title, narrative",
		"SELECT session_id, project, request, investigated, learned, completed, next_steps, notes FROM summaries ORDER BY session_id, request, completed",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				fmt.Fprintf(&b, "%v\t", v)
			}
			b.WriteString("\n")
		}
		rows.Close()
		b.WriteString("--\n")
	}
	return b.String()
}

// TestImportFromClaudeCode: a generated Claude Code session (its transcript and the hook
// calls Claude Code made, both in the captured fixture format) recorded by live hooks on one
// node, and imported from the transcript alone on another, gives the same records; a
// second import stores nothing new; no private or secret byte is stored.
func TestImportFromClaudeCode(t *testing.T) {
	proj := gitDir(t, "demo-app")
	sid := "5f0c9a3e-1b2d-4c7e-9f10-aa11bb22cc33"
	steps := genClaudeSession(sid, proj, time.Date(2026, 11, 28, 9, 14, 0, 0, time.UTC))

	// Live: Claude Code writes the transcript as it goes and runs the hooks.
	live := newInstance(t)
	live.start()
	transcript := filepath.Join(t.TempDir(), sid+".jsonl")
	for _, s := range steps {
		appendJSONL(t, transcript, s.lines)
		s.hook["transcript_path"] = transcript
		payload, _ := json.Marshal(s.hook)
		if r := live.runLean(payload, "hook", "claude-code", s.event); r.code != 0 {
			t.Fatalf("live %s hook: exit %d %s", s.event, r.code, r.stderr)
		}
	}

	// Import: the same transcript where Claude Code keeps it.
	imp := newInstance(t)
	imp.start()
	projects := filepath.Join(t.TempDir(), "projects")
	dst := filepath.Join(projects, "-home-dev-demo-app", sid+".jsonl")
	os.MkdirAll(filepath.Join(filepath.Dir(dst), "memory"), 0o700)
	os.WriteFile(dst, readFile(t, transcript), 0o600)
	// Memory files: the user's CLAUDE.md (global), the project's, its auto memory.
	os.WriteFile(filepath.Join(filepath.Dir(projects), "CLAUDE.md"), []byte("# Me\n\n- I use pnpm, never npm\n- <private>SECRET-personal-rule</private>\n"), 0o600)
	os.WriteFile(filepath.Join(proj, "CLAUDE.md"), []byte("# demo-app\n\nBuild notes.\n\n- Run make lint before every commit\n```sh\n- not an entry\n```\n"), 0o600)
	os.WriteFile(filepath.Join(filepath.Dir(dst), "memory", "MEMORY.md"), []byte("- The auth tests need REDIS_URL <private>SECRET-redis-pass</private>\n"), 0o600)
	out := imp.mustRun(nil, "import", "--from-claude-code", projects)
	if !strings.Contains(out, "imported 1 Claude Code sessions") || !strings.Contains(out, "3 entries saved as notes, 0 were already there") {
		t.Errorf("import said %q", out)
	}
	notes := func() string {
		var b strings.Builder
		rows, err := imp.db().Query("SELECT project, narrative FROM observations WHERE tool_name = 'save_memory' ORDER BY project, narrative")
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

	settled := func(in *instance) string {
		var last string
		testkit.WaitForState(t, "the records to settle", 60*time.Second, func() (bool, string) {
			cur := storedRecords(t, in)
			ok := in.queued() == 0 && cur == last && strings.Contains(cur, "refresh")
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
	if out := imp.mustRun(nil, "import", "--from-claude-code", projects, "--quiet"); !strings.Contains(out, "0 entries saved as notes, 3 were already there") {
		t.Errorf("second import said %q", out)
	}
	if again := settled(imp); again != got {
		t.Errorf("a second import changed the records:\n%s", again)
	}
	if n := notes(); n != wantNotes {
		t.Errorf("a second import changed the notes:\n%s", n)
	}

	// memnode install claude-code offers the import once when sessions are on disk.
	fresh := newInstance(t) // HOME is its data dir
	os.MkdirAll(filepath.Join(fresh.dataDir, ".claude", "projects", "-w-app"), 0o700)
	os.WriteFile(filepath.Join(fresh.dataDir, ".claude", "projects", "-w-app", "s1.jsonl"), []byte(`{"type":"user","sessionId":"s1","message":{"content":"hi"}}`+"\n"), 0o600)
	if out := fresh.mustRun(nil, "install", "claude-code"); !strings.Contains(out, "Claude Code has 1 past sessions on this machine: 'memnode import --from-claude-code'") {
		t.Errorf("install did not offer the import:\n%s", out)
	}
	if out := fresh.mustRun(nil, "install", "claude-code"); strings.Contains(out, "import --from-claude-code") {
		t.Errorf("install offered the import twice:\n%s", out)
	}
	for _, in := range []*instance{live, imp} {
		grepDataDir(t, in.dataDir, "SECRET-")
	}
}

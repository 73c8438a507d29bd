package e2ekit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CcStep is one moment of a generated Claude Code session: the transcript lines Claude Code
// writes (in its transcript format, as captured in ../shared/fixtures/claude-code) and the
// hook call it makes then (memnode event and stdin payload, as captured there too).
type CcStep struct {
	Lines []map[string]any
	Event string
	Hook  map[string]any
}

// GenClaudeSession generates one session in project dir cwd: three turns — a prompt with a
// private part whose tools read, edit, pass and fail and send a secret inside <private>; a
// wholly private prompt whose tool call and answer repeat it; a plain follow-up.
func GenClaudeSession(sid, cwd string, start time.Time) []CcStep {
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
	var steps []CcStep
	prompt := func(text string) {
		steps = append(steps, CcStep{Lines: []map[string]any{user(text)}, Event: "session-init",
			Hook: base(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": text})})
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
		steps = append(steps, CcStep{Lines: []map[string]any{assistant(map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}), res},
			Event: "observation", Hook: h})
	}
	answer := func(text string) {
		steps = append(steps, CcStep{Lines: []map[string]any{assistant(map[string]any{"type": "text", "text": text})}, Event: "summarize",
			Hook: base(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false})})
	}
	mw := filepath.Join(cwd, "internal/auth/middleware.go")
	steps = append(steps, CcStep{Event: "context", Hook: base(map[string]any{"hook_event_name": "SessionStart", "source": "startup"})})
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
	steps = append(steps, CcStep{Event: "session-end", Hook: base(map[string]any{"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})})
	return steps
}

func AppendJSONL(t *testing.T, path string, lines []map[string]any) {
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

// StoredRecords renders what a node stored, without IDs, times and origins: the records
// live hooks and an import of the same session must agree on.
func StoredRecords(t *testing.T, in *Instance) string {
	t.Helper()
	db := in.Db()
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

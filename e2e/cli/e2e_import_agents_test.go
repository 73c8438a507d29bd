package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// The generators below write one session of each agent the way the agent does: its session
// file, line by line, in the format captured in ../shared/fixtures/<agent> (README.md and
// transcript-*.jsonl there), and the hook calls it makes meanwhile, in the payload format
// captured there (session.jsonl). Each session has the same three turns as the Claude Code
// one (genClaudeSession): a prompt with a private part whose tools read, edit, pass, fail
// and send a secret inside <private>; a wholly private prompt whose tool call and answer
// repeat it; a plain follow-up.

// genGeminiSession generates a Gemini CLI 0.61 session: its session file (a message is
// written again once its tool call is added, as Gemini CLI does) and its hook calls.
func genGeminiSession(sid, cwd, file string, start time.Time) []e2ekit.CcStep {
	clk := &e2ekit.GenClock{Start: start}
	base := func(h map[string]any) map[string]any {
		h["session_id"], h["cwd"], h["transcript_path"], h["timestamp"] = sid, cwd, file, clk.Next()
		return h
	}
	steps := []e2ekit.CcStep{{
		Lines: []map[string]any{{"sessionId": sid, "projectHash": "e0f16bbc", "startTime": clk.Next(), "lastUpdated": clk.Next(), "kind": "main"},
			{"$set": map[string]any{"messages": []any{map[string]any{"id": "ctx", "type": "user", "content": []map[string]any{{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}}}}}}},
		Event: "context", Hook: base(map[string]any{"hook_event_name": "SessionStart", "source": "startup"}),
	}}
	var prompt string
	var texts []string
	n := 0
	ask := func(text string) {
		n++
		shown := text
		if n == 1 {
			shown = "<hook_context>MNMARK-SS</hook_context>\n\n" + text // the SessionStart context, prepended
		}
		prompt, texts = shown, nil
		steps = append(steps, e2ekit.CcStep{Lines: []map[string]any{
			{"id": fmt.Sprintf("u%d", n), "timestamp": clk.Next(), "type": "user",
				"content": []map[string]any{{"text": shown}, {"text": "<hook_context>MNMARK-UP</hook_context>"}}, "displayContent": []map[string]any{{"text": shown}}},
			{"$set": map[string]any{"lastUpdated": clk.Next()}},
		}, Event: "session-init", Hook: base(map[string]any{"hook_event_name": "BeforeAgent", "prompt": shown})})
	}
	tool := func(id, name string, args map[string]any, output any, display any, failure string) {
		n++
		gid := fmt.Sprintf("g%d", n)
		at := clk.Next()
		resp := map[string]any{"output": output}
		status := "success"
		toolResp := map[string]any{"llmContent": output, "returnDisplay": display}
		if failure != "" {
			resp, status = map[string]any{"error": failure}, "error"
			toolResp = map[string]any{"llmContent": "Could not do it.", "returnDisplay": display, "error": map[string]any{"message": failure, "type": "file_not_found"}}
		}
		fr := map[string]any{"functionResponse": map[string]any{"id": id, "name": name, "response": resp}}
		msg := map[string]any{"id": gid, "timestamp": at, "type": "gemini", "content": "", "thoughts": []any{}, "model": "gemini-2.5-flash"}
		full := map[string]any{}
		for k, v := range msg {
			full[k] = v
		}
		full["toolCalls"] = []map[string]any{{"id": id, "name": name, "args": args, "result": []any{fr}, "status": status, "timestamp": clk.Next(), "resultDisplay": display}}
		steps = append(steps, e2ekit.CcStep{Lines: []map[string]any{msg, {"$set": map[string]any{"lastUpdated": at}}, full,
			{"id": fmt.Sprintf("r%d", n), "timestamp": clk.Next(), "type": "user", "content": []any{fr}}},
			Event: "observation", Hook: base(map[string]any{"hook_event_name": "AfterTool", "tool_name": name, "tool_input": args, "tool_response": toolResp})})
	}
	answer := func(text string) {
		n++
		texts = append(texts, text)
		steps = append(steps, e2ekit.CcStep{Lines: []map[string]any{{"id": fmt.Sprintf("g%d", n), "timestamp": clk.Next(), "type": "gemini", "content": text, "model": "gemini-2.5-flash"}},
			Event: "summarize", Hook: base(map[string]any{"hook_event_name": "AfterAgent", "prompt": prompt, "prompt_response": strings.Join(texts, " \n"), "stop_hook_active": false})})
	}
	say := func(text string) { // text of the turn before its tools
		texts = append(texts, text)
	}
	shellOut := func(out string, code int) string {
		s := "<untrusted_context>\nOutput: " + out + "\n"
		if code != 0 {
			s += fmt.Sprintf("Exit Code: %d\n", code)
		}
		return s + "Process Group PGID: 999\n</untrusted_context>"
	}
	mw := filepath.Join(cwd, "internal/auth/middleware.go")
	ask(e2ekit.GenPrompt1)
	say("Let me look at the code.")
	steps[len(steps)-1].Lines = append(steps[len(steps)-1].Lines, map[string]any{"id": "g-say", "timestamp": clk.Next(), "type": "gemini", "content": "Let me look at the code.", "model": "gemini-2.5-flash"})
	tool("read_1", "read_file", map[string]any{"file_path": mw}, "package auth\n\nfunc middleware() { claims, _ := parse(tok) }\n", "", "")
	tool("read_2", "read_file", map[string]any{"file_path": filepath.Join(cwd, "NOTES.md")}, nil, "File not found.", "File not found: "+filepath.Join(cwd, "NOTES.md"))
	tool("replace_3", "replace", map[string]any{"file_path": mw, "old_string": "claims, _ := parse(tok)", "new_string": "claims, err := parse(tok)", "instruction": "Check the parse error."},
		"Successfully modified file: "+mw+" (1 replacements).",
		map[string]any{"fileDiff": "@@ -1 +1 @@\n-claims, _ := parse(tok)\n+claims, err := parse(tok)\n", "fileName": "middleware.go", "filePath": mw,
			"originalContent": "claims, _ := parse(tok)\n", "newContent": "claims, err := parse(tok)\n", "isNewFile": false}, "")
	tool("shell_4", "run_shell_command", map[string]any{"command": "go test ./internal/auth/...", "description": "Run auth tests"}, shellOut("ok  \tdemo-app/internal/auth\t0.412s", 0), "ok", "")
	tool("shell_5", "run_shell_command", map[string]any{"command": e2ekit.GenSecretCommand, "description": "Probe login"}, shellOut("{\"error\":\"token expired\"}", 0), "{}", "")
	tool("shell_6", "run_shell_command", map[string]any{"command": "go vet ./internal/refresh/...", "description": "Vet refresh"},
		shellOut("internal/refresh/refresh.go:12: claims declared and not used", 1), "claims declared and not used", "")
	answer(e2ekit.GenAnswer1)
	ask(e2ekit.GenPrompt2)
	tool("shell_7", "run_shell_command", map[string]any{"command": "grep -rn hunter internal/", "description": "search"}, shellOut("internal/x.go:1: hunter", 0), "hunter", "")
	answer(e2ekit.GenAnswer2)
	ask(e2ekit.GenPrompt3)
	tool("replace_8", "replace", map[string]any{"file_path": filepath.Join(cwd, "internal/refresh/refresh.go"), "old_string": "claims, _ :=", "new_string": "claims, err :=", "instruction": "Same fix."},
		"Successfully modified file.", map[string]any{"fileDiff": "-claims, _ :=\n+claims, err :=\n", "fileName": "refresh.go", "filePath": filepath.Join(cwd, "internal/refresh/refresh.go"),
			"originalContent": "claims, _ :=\n", "newContent": "claims, err :=\n", "isNewFile": false}, "")
	answer(e2ekit.GenAnswer3)
	steps = append(steps, e2ekit.CcStep{Event: "session-end", Hook: base(map[string]any{"hook_event_name": "SessionEnd", "reason": "exit"})})
	return steps
}

// genQwenSession generates a Qwen Code 0.24 session: its chat file (with the system records
// Qwen Code writes between) and its hook calls, the empty UserPromptSubmit before each
// further model request included.
func genQwenSession(sid, cwd, file string, start time.Time) []e2ekit.CcStep {
	clk := &e2ekit.GenClock{Start: start}
	promptID := ""
	base := func(h map[string]any) map[string]any {
		h["session_id"], h["cwd"], h["transcript_path"], h["timestamp"], h["permission_mode"] = sid, cwd, file, clk.Next(), "yolo"
		if promptID != "" {
			h["prompt_id"] = promptID
		}
		return h
	}
	n := 0
	rec := func(typ string, extra map[string]any) map[string]any {
		n++
		r := map[string]any{"uuid": fmt.Sprintf("q%d", n), "parentUuid": nil, "sessionId": sid, "timestamp": clk.Next(), "type": typ,
			"cwd": cwd, "version": "0.24.4", "gitBranch": "main"}
		for k, v := range extra {
			r[k] = v
		}
		return r
	}
	system := func() map[string]any {
		return rec("system", map[string]any{"subtype": "ui_telemetry", "systemPayload": map[string]any{"uiEvent": map[string]any{"event.name": "qwen-code.api_response"}}})
	}
	steps := []e2ekit.CcStep{{Event: "context", Hook: base(map[string]any{"hook_event_name": "SessionStart", "source": "startup", "model": "local-model"})}}
	turn := 0
	ask := func(text string) {
		promptID = fmt.Sprintf("%s########%d", sid, turn)
		turn++
		steps = append(steps, e2ekit.CcStep{Lines: []map[string]any{
			rec("user", map[string]any{"provenance": "real_user", "message": map[string]any{"role": "user", "parts": []map[string]any{{"text": text},
				{"text": "<qwen:user-prompt-submit-context>\nMNMARK-UP\n</qwen:user-prompt-submit-context>"}}},
				"systemPayload": map[string]any{"displayText": text, "hookContext": "MNMARK-UP"}}),
			rec("system", map[string]any{"subtype": "attribution_snapshot"}),
		}, Event: "session-init", Hook: base(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": text, "submitted_prompt": text})})
	}
	tool := func(id, name string, args map[string]any, output string, display any, failure string) {
		resp := map[string]any{"output": output}
		result := map[string]any{"callId": id, "status": "success", "resultDisplay": display, "executionStatus": "success"}
		h := base(map[string]any{"hook_event_name": "PostToolUse", "tool_name": name, "tool_input": args,
			"tool_response": map[string]any{"llmContent": output, "returnDisplay": display}, "tool_use_id": id})
		if failure != "" {
			resp = map[string]any{"error": failure}
			result["status"], result["executionStatus"] = "error", "error"
			h = base(map[string]any{"hook_event_name": "PostToolUseFailure", "tool_name": name, "tool_input": args, "error": failure, "is_interrupt": false, "tool_use_id": id})
		}
		steps = append(steps, e2ekit.CcStep{Lines: []map[string]any{
			system(),
			rec("assistant", map[string]any{"provenance": "assistant_output", "model": "local-model", "message": map[string]any{"role": "model",
				"parts": []map[string]any{{"functionCall": map[string]any{"id": id, "name": name, "args": args}}}}}),
			rec("tool_result", map[string]any{"provenance": "tool_result", "message": map[string]any{"role": "user",
				"parts": []map[string]any{{"functionResponse": map[string]any{"id": id, "name": name, "response": resp}}}}, "toolCallResult": result}),
		}, Event: "observation", Hook: h})
		// The next model request of the turn: an empty prompt (a continuation).
		steps = append(steps, e2ekit.CcStep{Event: "session-init", Hook: base(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": ""})})
	}
	answer := func(text string) {
		steps = append(steps, e2ekit.CcStep{Lines: []map[string]any{system(),
			rec("assistant", map[string]any{"provenance": "assistant_output", "message": map[string]any{"role": "model", "parts": []map[string]any{{"text": text}}}})},
			Event: "summarize", Hook: base(map[string]any{"hook_event_name": "Stop", "stop_hook_active": false, "last_assistant_message": text, "background_tasks": []any{}})})
	}
	shellOut := func(cmd, out string, code int) string {
		return fmt.Sprintf("Command: %s\nDirectory: (root)\nOutput: %s\nError: (none)\nExit Code: %d\nSignal: (none)\nProcess Group PGID: (none)", cmd, out, code)
	}
	mw := filepath.Join(cwd, "internal/auth/middleware.go")
	ask(e2ekit.GenPrompt1)
	tool("call_1", "read_file", map[string]any{"file_path": mw}, "package auth\n\nfunc middleware() { claims, _ := parse(tok) }\n", "", "")
	tool("call_2", "read_file", map[string]any{"file_path": filepath.Join(cwd, "NOTES.md")}, "", "", "File not found: "+filepath.Join(cwd, "NOTES.md"))
	tool("call_3", "edit", map[string]any{"file_path": mw, "old_string": "claims, _ := parse(tok)", "new_string": "claims, err := parse(tok)"},
		"The file: "+mw+" has been updated.", map[string]any{"fileDiff": "-claims, _ := parse(tok)\n+claims, err := parse(tok)\n", "fileName": "middleware.go", "filePath": mw,
			"originalContent": "claims, _ := parse(tok)\n", "newContent": "claims, err := parse(tok)\n"}, "")
	tool("call_4", "run_shell_command", map[string]any{"command": "go test ./internal/auth/...", "description": "Run auth tests"},
		shellOut("go test ./internal/auth/...", "ok  \tdemo-app/internal/auth\t0.412s", 0), "ok", "")
	tool("call_5", "run_shell_command", map[string]any{"command": e2ekit.GenSecretCommand, "description": "Probe login"},
		shellOut(e2ekit.GenSecretCommand, "{\"error\":\"token expired\"}", 0), "{}", "")
	tool("call_6", "run_shell_command", map[string]any{"command": "go vet ./internal/refresh/...", "description": "Vet refresh"}, "", nil,
		shellOut("go vet ./internal/refresh/...", "internal/refresh/refresh.go:12: claims declared and not used", 1))
	answer(e2ekit.GenAnswer1)
	ask(e2ekit.GenPrompt2)
	tool("call_7", "run_shell_command", map[string]any{"command": "grep -rn hunter internal/", "description": "search"},
		shellOut("grep -rn hunter internal/", "internal/x.go:1: hunter", 0), "hunter", "")
	answer(e2ekit.GenAnswer2)
	ask(e2ekit.GenPrompt3)
	tool("call_8", "edit", map[string]any{"file_path": filepath.Join(cwd, "internal/refresh/refresh.go"), "old_string": "claims, _ :=", "new_string": "claims, err :="},
		"The file has been updated.", map[string]any{"fileDiff": "-claims, _ :=\n+claims, err :=\n", "fileName": "refresh.go", "filePath": filepath.Join(cwd, "internal/refresh/refresh.go"),
			"originalContent": "claims, _ :=\n", "newContent": "claims, err :=\n"}, "")
	answer(e2ekit.GenAnswer3)
	steps = append(steps, e2ekit.CcStep{Event: "session-end", Hook: base(map[string]any{"hook_event_name": "SessionEnd", "reason": "other"})})
	return steps
}

// TestImportFromOtherAgents: a generated session of Codex CLI, Gemini CLI and Qwen Code each
// (session file and hook calls in the captured fixture formats) recorded by live hooks on
// one node, and imported from the session files alone — where each agent keeps them — on
// another, gives the same records; the agents' memory files become notes; a second import
// stores nothing new; a torn line is skipped and said; no private or secret byte is stored.
func TestImportFromOtherAgents(t *testing.T) {
	t.Parallel()
	home := t.TempDir() // the agents' home: where the import finds their files
	type agent struct {
		name, flag, dir string
		file            func(sid string) string // the session file, below dir
		gen             func(sid, cwd, file string, start time.Time) []e2ekit.CcStep
		userMem         string // the user's memory file, below home
		projMem         string // a project's memory file
		sid, proj       string
	}
	agents := []*agent{
		{name: "codex", flag: "--from-codex", dir: filepath.Join(home, ".codex", "sessions"),
			file: func(sid string) string {
				return filepath.Join("2026", "11", "28", "rollout-2026-11-28T09-14-00-"+sid+".jsonl")
			},
			gen: e2ekit.GenCodexSession, userMem: ".codex/AGENTS.md", projMem: "AGENTS.md", sid: "019ac0de-6d6a-7042-a931-bbc0db2b3795"},
		{name: "gemini-cli", flag: "--from-gemini-cli", dir: filepath.Join(home, ".gemini", "tmp"),
			file: func(sid string) string {
				return filepath.Join("demo-gemini", "chats", "session-2026-11-28T09-14-"+sid[:8]+".jsonl")
			},
			gen: genGeminiSession, userMem: ".gemini/GEMINI.md", projMem: "GEMINI.md", sid: "13b5a796-6f64-4026-8dc7-72a82099f476"},
		{name: "qwen-code", flag: "--from-qwen-code", dir: filepath.Join(home, ".qwen", "projects"),
			file: func(sid string) string { return filepath.Join("-home-dev-demo-qwen", "chats", sid+".jsonl") },
			gen:  genQwenSession, userMem: ".qwen/QWEN.md", projMem: "QWEN.md", sid: "1727470c-1deb-4e9e-9adc-fed359c09b18"},
	}
	live := e2ekit.NewInstance(t)
	live.Start()
	imp := e2ekit.NewInstance(t)
	imp.Start()
	start := time.Date(2026, 11, 28, 9, 14, 0, 0, time.UTC)
	for _, a := range agents {
		a.proj = e2ekit.GitDir(t, "demo-"+a.name)
		file := filepath.Join(a.dir, a.file(a.sid))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if a.name == "gemini-cli" {
			os.WriteFile(filepath.Join(a.dir, "demo-gemini", ".project_root"), []byte(a.proj+"\n"), 0o600)
		}
		// Live: the agent writes its session file as it goes and runs the hooks.
		for _, s := range a.gen(a.sid, a.proj, file, start) {
			e2ekit.AppendJSONL(t, file, s.Lines)
			payload, _ := json.Marshal(s.Hook)
			if r := live.RunLean(payload, "hook", a.name, s.Event); r.Code != 0 {
				t.Fatalf("live %s %s hook: exit %d %s", a.name, s.Event, r.Code, r.Stderr)
			}
		}
		os.MkdirAll(filepath.Join(home, filepath.Dir(a.userMem)), 0o700)
		os.WriteFile(filepath.Join(home, a.userMem), []byte("# Me\n\n- With "+a.name+" I use pnpm, never npm\n- <private>SECRET-personal-rule</private>\n"), 0o600)
		os.WriteFile(filepath.Join(a.proj, a.projMem), []byte("# demo\n\n- Run make lint before every commit of "+a.name+"\n```sh\n- not an entry\n```\n"), 0o600)
	}
	// A line torn by a crash, at the end of the Qwen Code chat file: skipped and said.
	qwenFile := filepath.Join(agents[2].dir, agents[2].file(agents[2].sid))
	f, _ := os.OpenFile(qwenFile, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"uuid": "torn", "sessionId": "` + agents[2].sid + `", "type": "assi` + "\n")
	f.Close()

	for _, a := range agents {
		r := imp.Run(nil, "import", a.flag, a.dir)
		if r.Code != 0 || !strings.Contains(r.Stdout, "imported 1 ") || !strings.Contains(r.Stdout, "2 entries saved as notes, 0 were already there") {
			t.Errorf("import %s: exit %d\n%s%s", a.flag, r.Code, r.Stdout, r.Stderr)
		}
		if !strings.Contains(r.Stderr, "1/1 sessions") {
			t.Errorf("import %s showed no progress: %q", a.flag, r.Stderr)
		}
		if torn := strings.Contains(r.Stdout, "skipped 1 malformed lines in 1 files"); torn != (a.name == "qwen-code") {
			t.Errorf("import %s: the torn line was said %v:\n%s", a.flag, torn, r.Stdout)
		}
	}
	var notes []string
	rows, err := imp.Db().Query("SELECT project, narrative FROM observations WHERE tool_name = 'save_memory' ORDER BY project, narrative")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var p, n string
		rows.Scan(&p, &n)
		notes = append(notes, p+": "+n)
	}
	rows.Close()
	wantNotes := []string{"(global): With codex I use pnpm, never npm", "(global): With gemini-cli I use pnpm, never npm", "(global): With qwen-code I use pnpm, never npm",
		"demo-codex: Run make lint before every commit of codex", "demo-gemini-cli: Run make lint before every commit of gemini-cli", "demo-qwen-code: Run make lint before every commit of qwen-code"}
	if strings.Join(notes, "\n") != strings.Join(wantNotes, "\n") {
		t.Errorf("memory-file notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(wantNotes, "\n"))
	}

	settled := func(in *e2ekit.Instance) string {
		var last string
		testkit.WaitForState(t, "the records to settle", 90*time.Second, func() (bool, string) {
			cur := e2ekit.StoredRecords(t, in)
			ok := in.Queued() == 0 && cur == last && strings.Count(cur, "refresh endpoint now checks") >= 3
			last = cur
			return ok, cur
		})
		return last
	}
	want, got := settled(live), settled(imp)
	if got != want {
		t.Errorf("the import stored other records than live hooks:\nlive:\n%s\nimport:\n%s", want, got)
	}
	for _, needle := range []string{"go test ./internal/auth/...", "demo-codex", "demo-gemini-cli", "demo-qwen-code", "codex", "gemini-cli", "qwen-code", "claims declared and not used"} {
		if !strings.Contains(want, needle) {
			t.Errorf("the sessions' records lack %q:\n%s", needle, want)
		}
	}

	// Twice: nothing new.
	for _, a := range agents {
		if out := imp.MustRun(nil, "import", a.flag, a.dir, "--quiet"); !strings.Contains(out, "0 entries saved as notes, 2 were already there") {
			t.Errorf("second import %s said %q", a.flag, out)
		}
	}
	if again := settled(imp); again != got {
		t.Errorf("a second import changed the records:\n%s", again)
	}

	// Where the agents keep them by default (HOME): the same sessions, nothing new.
	imp.Extra = append(imp.Extra, "HOME="+home, "CODEX_HOME=")
	for _, a := range agents {
		if out := imp.MustRun(nil, "import", a.flag, "--quiet"); !strings.Contains(out, "imported 1 ") || !strings.Contains(out, "from "+a.dir) {
			t.Errorf("import %s from the default folder said %q", a.flag, out)
		}
	}
	if again := settled(imp); again != got {
		t.Errorf("an import from the default folder changed the records:\n%s", again)
	}
	for _, in := range []*e2ekit.Instance{live, imp} {
		e2ekit.GrepDataDir(t, in.DataDir, "SECRET-")
	}
}

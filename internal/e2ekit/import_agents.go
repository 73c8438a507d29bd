package e2ekit

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

const (
	GenPrompt1       = "The login endpoint returns 500 when the JWT has expired. Find out why and fix it. <private>staging password is SECRET-hunter2</private>"
	GenPrompt2       = "<private>SECRET-only-private-prompt do not store</private>"
	GenPrompt3       = "Now apply the same fix to the refresh endpoint."
	GenAnswer1       = "Fixed: the middleware ignored the parse error, so an expired JWT gave nil claims and a 500. It now returns 401 for jwt.ErrTokenExpired. Next: the refresh endpoint has the same pattern."
	GenAnswer2       = "Noted the private request (SECRET-only-private-prompt); nothing else to do."
	GenAnswer3       = "The refresh endpoint now checks the parse error too."
	GenSecretCommand = "curl -s -H 'Authorization: Bearer <private>SECRET-eyJhbGciOi</private>' localhost:8080/login"
)

// GenClock hands out the session's timestamps, a second apart.
type GenClock struct {
	Start time.Time
	n     int
}

func (c *GenClock) Next() string {
	c.n++
	return c.Start.Add(time.Duration(c.n) * time.Second).UTC().Format(time.RFC3339Nano)
}

// GenCodexSession generates a Codex CLI 0.171 session: its rollout records and its hook
// calls. The failed apply_patch fires no hook (Codex fires none; the Stop hook reads it).
func GenCodexSession(sid, cwd, rollout string, start time.Time) []CcStep {
	clk := &GenClock{Start: start}
	base := func(h map[string]any) map[string]any {
		h["session_id"], h["cwd"], h["transcript_path"], h["model"], h["permission_mode"] = sid, cwd, rollout, "gpt-5.5", "bypassPermissions"
		return h
	}
	rec := func(typ string, payload map[string]any) map[string]any {
		return map[string]any{"timestamp": clk.Next(), "ordinal": clk.n, "type": typ, "payload": payload}
	}
	steps := []CcStep{{
		Lines: []map[string]any{rec("session_meta", map[string]any{"id": sid, "session_id": sid, "cwd": cwd, "originator": "codex_exec", "cli_version": "0.171.0", "source": "exec"}),
			rec("event_msg", map[string]any{"type": "task_started", "turn_id": "t0"})},
		Event: "context", Hook: base(map[string]any{"hook_event_name": "SessionStart", "source": "startup"}),
	}}
	turn := 0
	prompt := func(text string) {
		turn++
		tid := fmt.Sprintf("turn-%d", turn)
		steps = append(steps, CcStep{Lines: []map[string]any{
			rec("turn_context", map[string]any{"turn_id": tid, "cwd": cwd}),
			rec("response_item", map[string]any{"type": "message", "role": "user", "content": []map[string]any{{"type": "input_text", "text": text}}}),
			rec("event_msg", map[string]any{"type": "item_completed", "turn_id": tid, "item": map[string]any{"type": "UserMessage", "id": "um-" + tid,
				"content": []map[string]any{{"type": "text", "text": text, "text_elements": []any{}}}}}),
		}, Event: "session-init", Hook: base(map[string]any{"hook_event_name": "UserPromptSubmit", "turn_id": tid, "prompt": text})})
	}
	shell := func(id, cmd, output string, code int) {
		status := "completed"
		if code != 0 {
			status = "failed"
		}
		args, _ := json.Marshal(map[string]any{"cmd": cmd})
		steps = append(steps, CcStep{Lines: []map[string]any{
			rec("response_item", map[string]any{"type": "function_call", "status": "completed", "name": "exec_command", "arguments": string(args), "call_id": id}),
			rec("event_msg", map[string]any{"type": "item_completed", "item": map[string]any{"type": "CommandExecution", "id": id,
				"command": []string{"/bin/bash", "-lc", cmd}, "status": status, "aggregated_output": output, "exit_code": code}}),
			rec("response_item", map[string]any{"type": "function_call_output", "call_id": id,
				"output": fmt.Sprintf("Chunk ID: 864d75\nWall time: 0.0000 seconds\nProcess exited with code %d\nOriginal token count: 9\nOutput:\n%s", code, output)}),
		}, Event: "observation", Hook: base(map[string]any{"hook_event_name": "PostToolUse", "turn_id": fmt.Sprintf("turn-%d", turn),
			"tool_name": "Bash", "tool_input": map[string]any{"command": cmd}, "tool_response": output, "tool_use_id": id})})
	}
	patch := func(id, text, output string) {
		s := CcStep{Lines: []map[string]any{
			rec("response_item", map[string]any{"type": "custom_tool_call", "status": "completed", "call_id": id, "name": "apply_patch", "input": text}),
			rec("response_item", map[string]any{"type": "custom_tool_call_output", "call_id": id, "output": output}),
		}}
		if strings.HasPrefix(output, "Exit code: 0") {
			s.Event, s.Hook = "observation", base(map[string]any{"hook_event_name": "PostToolUse", "turn_id": fmt.Sprintf("turn-%d", turn),
				"tool_name": "apply_patch", "tool_input": map[string]any{"command": text}, "tool_response": output, "tool_use_id": id})
		}
		steps = append(steps, s)
	}
	answer := func(text string) {
		steps = append(steps, CcStep{Lines: []map[string]any{
			rec("event_msg", map[string]any{"type": "item_completed", "item": map[string]any{"type": "AgentMessage", "id": fmt.Sprintf("msg-%d", turn), "content": []map[string]any{{"type": "Text", "text": text}}}}),
			rec("response_item", map[string]any{"type": "message", "role": "assistant", "content": []map[string]any{{"type": "output_text", "text": text}}}),
			rec("event_msg", map[string]any{"type": "task_complete", "turn_id": fmt.Sprintf("turn-%d", turn), "last_agent_message": text}),
		}, Event: "summarize", Hook: base(map[string]any{"hook_event_name": "Stop", "turn_id": fmt.Sprintf("turn-%d", turn), "stop_hook_active": false, "last_assistant_message": text})})
	}
	mw := "internal/auth/middleware.go"
	prompt(GenPrompt1)
	shell("call_01cat", "cat "+mw, "package auth\n\nfunc middleware() { claims, _ := parse(tok) }\n", 0)
	patch("call_02patch", "*** Begin Patch\n*** Update File: "+mw+"\n@@\n-func middleware() { claims, _ := parse(tok) }\n+func middleware() { claims, err := parse(tok) }\n*** End Patch\n",
		"apply_patch verification failed: Failed to find expected lines in "+filepath.Join(cwd, mw))
	patch("call_03patch", "*** Begin Patch\n*** Update File: "+mw+"\n@@\n-\tclaims, _ := parse(tok)\n+\tclaims, err := parse(tok)\n*** End Patch\n",
		"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM "+mw+"\n")
	shell("call_04test", "go test ./internal/auth/...", "ok  \tdemo-app/internal/auth\t0.412s\n", 0)
	shell("call_05curl", GenSecretCommand, "{\"error\":\"token expired\"}", 0)
	shell("call_06vet", "go vet ./internal/refresh/...", "internal/refresh/refresh.go:12: claims declared and not used\n", 1)
	answer(GenAnswer1)
	prompt(GenPrompt2)
	shell("call_07grep", "grep -rn hunter internal/", "internal/x.go:1: hunter\n", 0)
	answer(GenAnswer2)
	prompt(GenPrompt3)
	patch("call_08patch", "*** Begin Patch\n*** Update File: internal/refresh/refresh.go\n@@\n-\tclaims, _ :=\n+\tclaims, err :=\n*** End Patch\n",
		"Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM internal/refresh/refresh.go\n")
	answer(GenAnswer3)
	steps = append(steps, CcStep{Event: "session-end", Hook: base(map[string]any{"hook_event_name": "SessionEnd", "reason": "other"})})
	return steps
}

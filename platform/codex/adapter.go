package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Adapter is the platform.Adapter for Codex CLI command hooks.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload has the fields of Codex's hook input that memnode uses (Claude Code's names).
type payload struct {
	SessionID            string          `json:"session_id"`
	TranscriptPath       string          `json:"transcript_path"`
	Cwd                  string          `json:"cwd"`
	HookEventName        string          `json:"hook_event_name"`
	Prompt               string          `json:"prompt"`
	ToolName             string          `json:"tool_name"`
	ToolUseID            string          `json:"tool_use_id"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	StopHookActive       bool            `json:"stop_hook_active"`
	LastAssistantMessage *string         `json:"last_assistant_message"`
	Source               string          `json:"source"`
	Reason               string          `json:"reason"`
	// Error is set by an import only (Claude Code's PostToolUseFailure shape): Codex fires
	// no hook for a tool call that failed outright, the Stop hook reads it from the rollout.
	Error *string `json:"error"`
}

// bookkeeping are Codex's housekeeping tools: tool_search loads deferred MCP tools, the
// rest manage its plan and background processes.
var bookkeeping = map[string]bool{
	"tool_search": true, "update_plan": true, "write_stdin": true, "view_image": true,
}

// mcpPrefix starts the names of memnode's own MCP tools as hooks see them.
const mcpPrefix = "mcp__" + install.MCPServerName + "__"

// Normalize implements platform.Adapter.
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode codex payload: %w", err)
	}
	in := platform.Input{
		SessionID:            p.SessionID,
		Cwd:                  p.Cwd,
		TranscriptPath:       p.TranscriptPath,
		HookEventName:        p.HookEventName,
		Prompt:               p.Prompt,
		ToolName:             p.ToolName,
		ToolUseID:            p.ToolUseID,
		ToolInput:            platform.NonNull(p.ToolInput),
		ToolResponse:         platform.NonNull(p.ToolResponse),
		Bookkeeping:          bookkeeping[p.ToolName] || strings.HasPrefix(p.ToolName, mcpPrefix),
		StopHookActive:       p.StopHookActive,
		LastAssistantMessage: p.LastAssistantMessage,
		Reason:               p.Reason,
	}
	if in.Reason == "" {
		in.Reason = p.Source
	}
	if event == platform.EventObservation {
		// A shell call that read files also asks for their context: the one PostToolUse
		// hook records the call and answers with it. (file-context, which an install from
		// before registered beside it, has nothing left to do.)
		if isShell(in.ToolName) {
			in.FilePaths = shellFilePaths(shellInput(in.ToolInput))
		}
		canonicalCall(&in)
		if p.Error != nil {
			in.ToolResponse = failure(*p.Error)
		}
	}
	return in, nil
}

// canonicalCall maps Codex's tool calls onto Claude Code's shapes: a shell run is Bash with
// {stdout} (or a failure when the rollout says it exited non-zero), an apply_patch of one
// file is an Edit or Write of it.
func canonicalCall(in *platform.Input) {
	text := responseText(in.ToolResponse)
	switch {
	case isShell(in.ToolName):
		in.ToolName = "Bash"
		in.ToolInput = shellInput(in.ToolInput)
		if code, ok := exitCode(in.TranscriptPath, in.ToolUseID); ok && code != 0 {
			in.ToolResponse = failure(fmt.Sprintf("Exit code %d\n%s", code, text))
			return
		}
		in.ToolResponse = mustJSON(map[string]any{"stdout": text})
	case in.ToolName == "apply_patch":
		var ti struct {
			Command string `json:"command"`
			Input   string `json:"input"`
		}
		_ = json.Unmarshal(in.ToolInput, &ti)
		patch := ti.Command + ti.Input
		name, input, ok := patchCall(patch, in.Cwd)
		if !ok {
			in.ToolResponse = mustJSON(map[string]any{"output": text})
			return
		}
		in.ToolName, in.ToolInput = name, input
		var fp struct {
			FilePath string `json:"file_path"`
		}
		_ = json.Unmarshal(input, &fp)
		in.ToolResponse = mustJSON(map[string]any{"filePath": fp.FilePath, "output": text})
	}
}

// isShell reports whether a hook's tool_name is Codex's shell (hooks say "Bash").
func isShell(name string) bool {
	return name == "Bash" || name == "exec_command" || name == "shell" || name == "local_shell"
}

// shellInput keeps {command} as a string (Codex may pass the argv list of exec_command as
// "cmd" or "command").
func shellInput(raw json.RawMessage) json.RawMessage {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		return raw
	}
	if _, ok := in["command"]; !ok {
		if c, ok := in["cmd"]; ok {
			in["command"] = c
			delete(in, "cmd")
		}
	}
	if argv, ok := in["command"].([]any); ok {
		parts := make([]string, 0, len(argv))
		for _, a := range argv {
			if s, ok := a.(string); ok {
				parts = append(parts, s)
			}
		}
		// ["bash", "-lc", "<script>"] runs the script: that is the command.
		if len(parts) == 3 && (parts[1] == "-lc" || parts[1] == "-c") {
			in["command"] = parts[2]
		} else {
			in["command"] = strings.Join(parts, " ")
		}
	}
	return mustJSON(in)
}

// responseText is a tool_response as text: a string for built-in tools, the text parts of
// {content: [...]} for MCP tools.
func responseText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var mcp struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(raw, &mcp) == nil && len(mcp.Content) > 0 {
		var texts []string
		for _, c := range mcp.Content {
			if c.Type == "text" {
				texts = append(texts, c.Text)
			}
		}
		return strings.Join(texts, "\n")
	}
	return string(raw)
}

func failure(msg string) json.RawMessage {
	return mustJSON(platform.Failure{Error: msg})
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil // only maps of strings and JSON values reach here
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// absPath resolves a patch's path against the session's cwd.
func absPath(p, cwd string) string {
	if filepath.IsAbs(p) || cwd == "" {
		return p
	}
	return filepath.Join(cwd, p)
}

// Format implements platform.Adapter with the output Codex validates: context as
// hookSpecificOutput {hookEventName, additionalContext} from SessionStart,
// UserPromptSubmit and (the observation's file context after a shell read) PostToolUse, an
// empty object (neutral) everywhere else.
func (Adapter) Format(event string, res platform.Result) ([]byte, error) {
	hookEvent := ""
	switch event {
	case platform.EventContext:
		hookEvent = "SessionStart"
	case platform.EventSessionInit:
		hookEvent = "UserPromptSubmit"
	case platform.EventObservation:
		hookEvent = "PostToolUse"
	}
	if hookEvent == "" || res.AdditionalContext == "" {
		return []byte("{}"), nil
	}
	b := mustJSON(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": hookEvent, "additionalContext": res.AdditionalContext,
	}})
	if b == nil {
		return nil, fmt.Errorf("encode codex output")
	}
	return b, nil
}

// MCPTool implements platform.Adapter: hooks and memnode's context name MCP tools
// mcp__<server>__<tool>; the model sees them in the namespace mcp__memnode.
func (Adapter) MCPTool(tool string) string { return mcpPrefix + tool }

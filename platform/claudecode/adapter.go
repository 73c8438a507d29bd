package claudecode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/platform"
)

// Adapter is the platform.Adapter for Claude Code command hooks.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload has the fields of Claude Code's hook input that memnode uses.
type payload struct {
	SessionID            string          `json:"session_id"`
	TranscriptPath       string          `json:"transcript_path"`
	Cwd                  string          `json:"cwd"`
	HookEventName        string          `json:"hook_event_name"`
	Prompt               json.RawMessage `json:"prompt"`
	ToolName             string          `json:"tool_name"`
	ToolUseID            string          `json:"tool_use_id"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	AgentID              string          `json:"agent_id"`
	AgentType            string          `json:"agent_type"`
	StopHookActive       bool            `json:"stop_hook_active"`
	LastAssistantMessage *string         `json:"last_assistant_message"`
	Source               string          `json:"source"`
	Reason               string          `json:"reason"`

	// PostToolUseFailure (Claude Code 2.1.x fires it instead of PostToolUse for a failed call).
	Error       *string `json:"error"`
	IsInterrupt bool    `json:"is_interrupt"`
	DurationMS  int64   `json:"duration_ms"`
}

// mcpPrefix starts the names of memnode's own MCP tools: recording memory lookups as
// memories would feed on itself.
const mcpPrefix = "mcp__" + install.MCPServerName + "__"

// Normalize implements platform.Adapter. Unknown fields are ignored; fields of an
// unexpected type are an error (the hook then answers neutrally).
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode claude-code payload: %w", err)
	}
	in := platform.Input{
		SessionID:            p.SessionID,
		Cwd:                  p.Cwd,
		TranscriptPath:       p.TranscriptPath,
		HookEventName:        p.HookEventName,
		Prompt:               promptText(p.Prompt),
		ToolName:             p.ToolName,
		ToolUseID:            p.ToolUseID,
		ToolInput:            platform.NonNull(p.ToolInput),
		ToolResponse:         platform.NonNull(p.ToolResponse),
		Bookkeeping:          memory.Housekeeping(p.ToolName) || strings.HasPrefix(p.ToolName, mcpPrefix),
		AgentID:              p.AgentID,
		AgentType:            p.AgentType,
		StopHookActive:       p.StopHookActive,
		LastAssistantMessage: p.LastAssistantMessage,
		Reason:               p.Reason,
	}
	if in.Reason == "" {
		in.Reason = p.Source
	}
	if p.Error != nil && in.ToolResponse == nil {
		b, err := json.Marshal(platform.Failure{Error: *p.Error, IsInterrupt: p.IsInterrupt, DurationMS: p.DurationMS})
		if err != nil {
			return platform.Input{}, fmt.Errorf("encode tool failure: %w", err)
		}
		in.ToolResponse = b
	}
	if event == platform.EventFileContext {
		in.FilePaths = filePaths(in.ToolInput)
	}
	return in, nil
}

// promptText accepts a string prompt, or an array of content parts whose text parts are
// joined (media-only prompts then yield "").
func promptText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return partsText(raw)
}

// partsText joins the text of [{type:"text",text:"…"}, …]; anything else yields "".
func partsText(raw json.RawMessage) string {
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// filePaths reads the Read tool's target: file_path, plus file_paths/filePaths arrays that
// batch-reading tools use.
func filePaths(toolInput json.RawMessage) []string {
	if len(toolInput) == 0 {
		return nil
	}
	var ti struct {
		FilePath   string   `json:"file_path"`
		FilePaths  []string `json:"file_paths"`
		FilePaths2 []string `json:"filePaths"`
	}
	if json.Unmarshal(toolInput, &ti) != nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range append(append([]string{ti.FilePath}, ti.FilePaths...), ti.FilePaths2...) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// Format implements platform.Adapter with Claude Code's output shapes. The file-context
// answer carries context only, never a permission decision: memnode must not turn off
// Claude Code's "ask before reading outside the workspace".
func (Adapter) Format(event string, res platform.Result) ([]byte, error) {
	var v any
	switch event {
	case platform.EventContext:
		out := map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     "SessionStart",
			"additionalContext": res.AdditionalContext,
		}}
		if res.SystemMessage != "" {
			out["systemMessage"] = res.SystemMessage // shown to the user, not the model
		}
		v = out
	case platform.EventSessionInit:
		if res.AdditionalContext == "" {
			v = map[string]any{"continue": true, "suppressOutput": true}
			break
		}
		v = map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     "UserPromptSubmit",
			"additionalContext": res.AdditionalContext,
		}}
	case platform.EventFileContext:
		if res.AdditionalContext == "" {
			v = map[string]any{"continue": true, "suppressOutput": true}
			break
		}
		v = map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     "PreToolUse",
			"additionalContext": res.AdditionalContext,
		}}
	default:
		v = map[string]any{"continue": true, "suppressOutput": true}
	}
	return encodeJSON(v)
}

// MCPTool implements platform.Adapter: Claude Code names MCP tools mcp__<server>__<tool>.
func (Adapter) MCPTool(tool string) string { return mcpPrefix + tool }

// encodeJSON marshals without HTML escaping (the context is read by a model, not a browser)
// and without the encoder's trailing newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

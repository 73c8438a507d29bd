package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Input is a hook payload in platform-neutral form. Every string in it comes from the
// cleaned payload.
type Input struct {
	SessionID      string
	Cwd            string
	TranscriptPath string
	HookEventName  string

	// Prompt (session-init). PromptHadText and ProtocolOnly are set by Run from the raw
	// payload: the only two facts taken from it.
	Prompt        string
	PromptHadText bool
	ProtocolOnly  bool

	ToolName     string
	ToolUseID    string
	ToolInput    json.RawMessage
	ToolResponse json.RawMessage
	// FilePaths are the files a Read is about to open (file-context).
	FilePaths []string

	AgentID   string
	AgentType string

	// StopHookActive marks a re-entered Stop hook.
	StopHookActive bool
	// LastAssistantMessage is set when the platform passes it directly (Codex does).
	LastAssistantMessage *string

	// Reason is SessionStart's source or SessionEnd's reason.
	Reason string
}

// Result is what a handler hands back for the IDE.
type Result struct {
	// AdditionalContext is injected into the agent's context (context, file-context).
	AdditionalContext string
}

// Adapter translates between one IDE's hook wire format and Input/Result, so adding an IDE
// (Cursor, Gemini CLI, Codex) touches no handler.
type Adapter interface {
	// Normalize maps a payload (a JSON object) for a memnode event to an Input.
	Normalize(event string, payload []byte) (Input, error)
	// Format renders a Result as the single JSON object the IDE expects on stdout.
	Format(event string, res Result) ([]byte, error)
}

// AdapterFor returns the adapter of a platform name as used on the command line.
func AdapterFor(platform string) (Adapter, bool) {
	switch platform {
	case "claude-code":
		return ClaudeCode{}, true
	}
	return nil, false
}

// ClaudeCode is the Adapter for Claude Code command hooks.
type ClaudeCode struct{}

var _ Adapter = ClaudeCode{}

// claudePayload has the fields of Claude Code's hook input that memnode uses.
type claudePayload struct {
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
}

// Normalize implements Adapter. Unknown fields are ignored; fields of an unexpected type
// are an error (the hook then answers neutrally).
func (ClaudeCode) Normalize(event string, payload []byte) (Input, error) {
	var p claudePayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return Input{}, fmt.Errorf("decode claude-code payload: %w", err)
	}
	in := Input{
		SessionID:            p.SessionID,
		Cwd:                  p.Cwd,
		TranscriptPath:       p.TranscriptPath,
		HookEventName:        p.HookEventName,
		Prompt:               promptText(p.Prompt),
		ToolName:             p.ToolName,
		ToolUseID:            p.ToolUseID,
		ToolInput:            nonNull(p.ToolInput),
		ToolResponse:         nonNull(p.ToolResponse),
		AgentID:              p.AgentID,
		AgentType:            p.AgentType,
		StopHookActive:       p.StopHookActive,
		LastAssistantMessage: p.LastAssistantMessage,
		Reason:               p.Reason,
	}
	if in.Reason == "" {
		in.Reason = p.Source
	}
	if event == EventFileContext {
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

func nonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return raw
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

// Format implements Adapter with Claude Code's output shapes.
func (ClaudeCode) Format(event string, res Result) ([]byte, error) {
	var v any
	switch event {
	case EventContext:
		v = map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     "SessionStart",
			"additionalContext": res.AdditionalContext,
		}}
	case EventSessionInit:
		if res.AdditionalContext == "" {
			v = map[string]any{"continue": true, "suppressOutput": true}
			break
		}
		v = map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":     "UserPromptSubmit",
			"additionalContext": res.AdditionalContext,
		}}
	case EventFileContext:
		v = map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":      "PreToolUse",
			"permissionDecision": "allow",
			"additionalContext":  res.AdditionalContext,
		}}
	default:
		v = map[string]any{"continue": true, "suppressOutput": true}
	}
	return encodeJSON(v)
}

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

// validObject reports whether b is exactly one JSON object.
func validObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}

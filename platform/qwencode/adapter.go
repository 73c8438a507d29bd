package qwencode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/geminicli"
)

// Adapter is the platform.Adapter for Qwen Code command hooks.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload has the fields of Qwen Code's hook input that memnode uses.
type payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	Source         string `json:"source"`
	Reason         string `json:"reason"`
	Prompt         string `json:"prompt"`
	// SubmittedPrompt is present only on a prompt's first UserPromptSubmit; the calls Qwen
	// Code makes before each further model request of the turn have none (and prompt "").
	SubmittedPrompt      json.RawMessage `json:"submitted_prompt"`
	ToolName             string          `json:"tool_name"`
	ToolUseID            string          `json:"tool_use_id"`
	ToolInput            json.RawMessage `json:"tool_input"`
	ToolResponse         json.RawMessage `json:"tool_response"`
	Error                *string         `json:"error"`
	IsInterrupt          bool            `json:"is_interrupt"`
	DurationMS           int64           `json:"duration_ms"`
	StopHookActive       bool            `json:"stop_hook_active"`
	LastAssistantMessage *string         `json:"last_assistant_message"`
	AgentID              string          `json:"agent_id"`
	AgentType            string          `json:"agent_type"`
}

// Normalize implements platform.Adapter. Unknown fields are ignored; fields of an
// unexpected type are an error (the hook then answers neutrally).
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode qwen-code payload: %w", err)
	}
	in := platform.Input{
		SessionID:            p.SessionID,
		Cwd:                  p.Cwd,
		TranscriptPath:       p.TranscriptPath,
		HookEventName:        p.HookEventName,
		Prompt:               p.Prompt,
		Continuation:         event == platform.EventSessionInit && p.Prompt == "" && len(p.SubmittedPrompt) == 0,
		ToolUseID:            p.ToolUseID,
		StopHookActive:       p.StopHookActive,
		LastAssistantMessage: p.LastAssistantMessage,
		AgentID:              p.AgentID,
		AgentType:            p.AgentType,
		Reason:               p.Reason,
	}
	if in.Reason == "" {
		in.Reason = p.Source
	}
	if p.ToolName != "" {
		res := geminicli.Result{FailText: p.Error, Interrupted: p.IsInterrupt, DurationMS: p.DurationMS}
		if len(p.ToolResponse) > 0 && string(p.ToolResponse) != "null" && p.Error == nil {
			if err := json.Unmarshal(p.ToolResponse, &res); err != nil {
				return platform.Input{}, fmt.Errorf("decode qwen-code tool_response: %w", err)
			}
		}
		input := p.ToolInput
		if string(input) == "null" {
			input = nil
		}
		c := geminicli.Canonical(p.ToolName, input, res)
		in.ToolName, in.ToolInput, in.ToolResponse, in.Bookkeeping = c.Name, c.Input, c.Response, c.Bookkeeping
	}
	if event == platform.EventObservation && p.ToolName == "read_file" && p.HookEventName == "PostToolUse" {
		// A read also asks for its file's context: the one PostToolUse hook records the call
		// and answers with it. (file-context, which an install from before registered
		// beside it, has nothing left to do.)
		in.FilePaths = geminicli.FilePaths(in.ToolInput)
	}
	return in, nil
}

// hookEvents names, per memnode event, the Qwen Code event whose output carries context.
var hookEvents = map[string]string{
	platform.EventContext:     "SessionStart",
	platform.EventSessionInit: "UserPromptSubmit",
	platform.EventObservation: "PostToolUse", // a read's file context
}

// Format implements platform.Adapter with Claude Code's hookSpecificOutput shape; anything
// without context is the neutral {} (never plain text: Qwen Code hands a SessionStart or
// UserPromptSubmit hook's plain stdout to the model).
func (Adapter) Format(event string, res platform.Result) ([]byte, error) {
	return geminicli.FormatHook(hookEvents, event, res)
}

// MCPTool implements platform.Adapter: Qwen Code names MCP tools mcp__<server>__<tool> and
// defers them behind tool_search.
func (Adapter) MCPTool(tool string) string { return "mcp__" + install.MCPServerName + "__" + tool }

// LastAssistantMessage implements platform.Adapter: the text of the last assistant record of
// the chat file (Stop passes last_assistant_message, so this is a fallback). The text is raw.
func (Adapter) LastAssistantMessage(path string) (string, error) {
	return geminicli.ScanTranscript(path, func(line []byte) (string, bool) {
		r, ok := decodeRecord(line, "assistant")
		if !ok {
			return "", false
		}
		text := strings.TrimSpace(r.text())
		return text, text != ""
	})
}

// LastUserPrompt returns the last prompt the user typed (without hook context), so that the
// summary hook can tell a wholly private turn. The text is raw.
func (Adapter) LastUserPrompt(path string) (string, error) {
	return geminicli.ScanTranscript(path, func(line []byte) (string, bool) {
		r, ok := decodeRecord(line, "user")
		if !ok {
			return "", false
		}
		text := r.SystemPayload.DisplayText
		if text == "" {
			text = r.text()
		}
		return text, strings.TrimSpace(text) != ""
	})
}

// record is one line of a Qwen Code chat file.
type record struct {
	Type    string `json:"type"`
	Message struct {
		Parts []struct {
			Text             string          `json:"text"`
			FunctionResponse json.RawMessage `json:"functionResponse"`
		} `json:"parts"`
	} `json:"message"`
	SystemPayload struct {
		DisplayText string `json:"displayText"`
	} `json:"systemPayload"`
}

func decodeRecord(line []byte, typ string) (record, bool) {
	var r record
	if json.Unmarshal(line, &r) != nil || r.Type != typ {
		return r, false
	}
	return r, true
}

// text joins the record's text parts, leaving out the context hooks injected.
func (r record) text() string {
	var texts []string
	for _, p := range r.Message.Parts {
		if p.Text != "" && !strings.HasPrefix(p.Text, "<qwen:") {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

package geminicli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Adapter is the platform.Adapter for Gemini CLI command hooks.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload has the fields of Gemini CLI's hook input that memnode uses.
type payload struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	HookEventName  string          `json:"hook_event_name"`
	Source         string          `json:"source"`
	Reason         string          `json:"reason"`
	Prompt         string          `json:"prompt"`
	PromptResponse *string         `json:"prompt_response"`
	StopHookActive bool            `json:"stop_hook_active"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
}

// hookContext matches the context a hook injected, which Gemini CLI prepends to the prompt
// it then hands to BeforeAgent and AfterAgent: memnode must not store its own context as
// the user's words.
var hookContext = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?s)<hook_context>.*?</hook_context>\s*`)
})

// StripHookContext removes injected <hook_context> blocks from a prompt.
func StripHookContext(s string) string {
	if !strings.Contains(s, "<hook_context>") {
		return s
	}
	return strings.TrimSpace(hookContext().ReplaceAllString(s, ""))
}

// Normalize implements platform.Adapter. Unknown fields are ignored; fields of an
// unexpected type are an error (the hook then answers neutrally).
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode gemini-cli payload: %w", err)
	}
	in := platform.Input{
		SessionID:      p.SessionID,
		Cwd:            p.Cwd,
		TranscriptPath: p.TranscriptPath,
		HookEventName:  p.HookEventName,
		Prompt:         StripHookContext(p.Prompt),
		StopHookActive: p.StopHookActive,
		Reason:         p.Reason,
	}
	if in.Reason == "" {
		in.Reason = p.Source
	}
	if p.PromptResponse != nil {
		msg := *p.PromptResponse
		in.LastAssistantMessage = &msg
	}
	if p.ToolName != "" {
		var res Result
		if r := platform.NonNull(p.ToolResponse); r != nil {
			if err := json.Unmarshal(r, &res); err != nil {
				return platform.Input{}, fmt.Errorf("decode gemini-cli tool_response: %w", err)
			}
		}
		c := Canonical(p.ToolName, platform.NonNull(p.ToolInput), res)
		in.ToolName, in.ToolInput, in.ToolResponse, in.Bookkeeping = c.Name, c.Input, c.Response, c.Bookkeeping
	}
	if event == platform.EventObservation && p.ToolName == "read_file" {
		// A read also asks for its file's context: the one AfterTool hook records the call
		// and answers with it. (file-context, which an install from before registered
		// beside it, has nothing left to do.)
		in.FilePaths = FilePaths(in.ToolInput)
	}
	return in, nil
}

// FilePaths reads a canonical Read call's target file.
func FilePaths(toolInput json.RawMessage) []string {
	var ti struct {
		FilePath string `json:"file_path"`
	}
	if len(toolInput) == 0 || json.Unmarshal(toolInput, &ti) != nil || ti.FilePath == "" {
		return nil
	}
	return []string{ti.FilePath}
}

// hookEvents names, per memnode event, the Gemini CLI event whose output carries context.
var hookEvents = map[string]string{
	platform.EventContext:     "SessionStart",
	platform.EventSessionInit: "BeforeAgent",
	platform.EventObservation: "AfterTool",
}

// Format implements platform.Adapter: context goes out as hookSpecificOutput's
// additionalContext (SessionStart: prepended to the first prompt; BeforeAgent: a part of
// the user's turn; AfterTool, the observation's file context after a read: appended to the
// tool's result), SessionStart's line for the user as systemMessage (shown to the user,
// never to the model); anything else is the neutral {}.
func (Adapter) Format(event string, res platform.Result) ([]byte, error) {
	return FormatHook(hookEvents, event, res)
}

// FormatHook renders res for an agent of Gemini CLI's output contract (Gemini CLI, Qwen
// Code): events maps a memnode event to the agent's event whose output carries context.
// The session start's SystemMessage goes out as the top-level systemMessage, which both
// show the user and never the model.
func FormatHook(events map[string]string, event string, res platform.Result) ([]byte, error) {
	name, ok := events[event]
	if !ok {
		return []byte("{}"), nil
	}
	out := map[string]any{}
	if res.AdditionalContext != "" {
		out["hookSpecificOutput"] = map[string]any{"hookEventName": name, "additionalContext": res.AdditionalContext}
	}
	if event == platform.EventContext && res.SystemMessage != "" {
		out["systemMessage"] = res.SystemMessage
	}
	if len(out) == 0 {
		return []byte("{}"), nil
	}
	return EncodeJSON(out)
}

// MCPTool implements platform.Adapter: Gemini CLI names MCP tools mcp_<server>_<tool>.
func (Adapter) MCPTool(tool string) string { return "mcp_" + install.MCPServerName + "_" + tool }

// EncodeJSON marshals without HTML escaping (the context is read by a model, not a browser)
// and without the encoder's trailing newline.
func EncodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

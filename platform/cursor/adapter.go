package cursor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Adapter is the platform.Adapter for Cursor's agent hooks.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload has the fields of Cursor's hook input that memnode uses (common fields, then
// per event; cursor.com/docs/agent/hooks).
type payload struct {
	HookEventName  string   `json:"hook_event_name"`
	ConversationID string   `json:"conversation_id"`
	SessionID      string   `json:"session_id"`
	WorkspaceRoots []string `json:"workspace_roots"`
	TranscriptPath *string  `json:"transcript_path"`
	Cwd            string   `json:"cwd"`

	// beforeSubmitPrompt
	Prompt string `json:"prompt"`
	// postToolUse, postToolUseFailure
	ToolName   string          `json:"tool_name"`
	ToolInput  json.RawMessage `json:"tool_input"`
	ToolOutput json.RawMessage `json:"tool_output"`
	ToolUseID  string          `json:"tool_use_id"`
	Duration   float64         `json:"duration"`
	// postToolUseFailure
	ErrorMessage string `json:"error_message"`
	FailureType  string `json:"failure_type"`
	IsInterrupt  bool   `json:"is_interrupt"`
	// afterShellExecution
	Command string `json:"command"`
	Output  string `json:"output"`
	// afterFileEdit
	FilePath string `json:"file_path"`
	Edits    []edit `json:"edits"`
	// afterAgentResponse
	Text *string `json:"text"`
	// sessionStart (composer_mode), sessionEnd (reason)
	Reason      string `json:"reason"`
	ComposeMode string `json:"composer_mode"`
}

type edit struct {
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

// tools maps Cursor's tool names (postToolUse) onto the canonical ones.
var tools = map[string]string{
	"Read": "Read", "Write": "Write", "Edit": "Edit", "StrReplace": "Edit", "MultiEdit": "MultiEdit",
	"Delete": "Delete", "Grep": "Grep", "Glob": "Glob", "LS": "LS", "ListDir": "LS",
	"WebFetch": "WebFetch", "WebSearch": "WebSearch", "Task": "Task", "Shell": "Bash",
}

// recordedElsewhere are the tools whose calls afterShellExecution and afterFileEdit record
// (every Cursor build with hooks has those two; postToolUse came later and fires for the
// same calls): recording them from postToolUse too would store each call twice.
var recordedElsewhere = map[string]bool{"Shell": true, "Write": true, "Edit": true, "StrReplace": true, "MultiEdit": true}

// ownTools are memnode's MCP tools (Cursor names MCP calls "MCP:<tool>"): memory lookups
// are not memories.
var ownTools = map[string]bool{"search": true, "timeline": true, "get_observations": true, "save_memory": true, "forget": true, "__IMPORTANT": true}

// Normalize implements platform.Adapter. The session is Cursor's conversation; the working
// directory is the payload's cwd, else the first workspace root.
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode cursor payload: %w", err)
	}
	in := platform.Input{
		SessionID:     p.ConversationID,
		Cwd:           p.Cwd,
		HookEventName: p.HookEventName,
		Prompt:        p.Prompt,
		Reason:        p.Reason,
	}
	if in.SessionID == "" {
		in.SessionID = p.SessionID
	}
	if in.Cwd == "" && len(p.WorkspaceRoots) > 0 {
		in.Cwd = p.WorkspaceRoots[0]
	}
	if p.TranscriptPath != nil {
		in.TranscriptPath = *p.TranscriptPath
	}
	if p.HookEventName == "sessionStart" && in.Reason == "" {
		in.Reason = "startup"
	}
	if event != platform.EventObservation {
		if event == platform.EventSummarize && p.Text != nil {
			in.LastAssistantMessage = p.Text
		}
		return in, nil
	}
	var err error
	switch p.HookEventName {
	case "afterShellExecution":
		in.ToolName = "Bash"
		in.ToolInput, err = json.Marshal(map[string]string{"command": p.Command})
		if err == nil {
			in.ToolResponse, err = json.Marshal(map[string]string{"stdout": p.Output})
		}
	case "afterFileEdit":
		err = fileEdit(&in, p)
	case "postToolUse", "postToolUseFailure":
		err = toolCall(&in, p)
	}
	if err != nil {
		return platform.Input{}, fmt.Errorf("map cursor %s: %w", p.HookEventName, err)
	}
	return in, nil
}

// fileEdit maps afterFileEdit onto Edit (one edit) or MultiEdit.
func fileEdit(in *platform.Input, p payload) error {
	var err error
	switch len(p.Edits) {
	case 0:
		in.ToolName = "Write"
		in.ToolInput, err = json.Marshal(map[string]string{"file_path": p.FilePath})
	case 1:
		in.ToolName = "Edit"
		in.ToolInput, err = json.Marshal(map[string]string{"file_path": p.FilePath,
			"old_string": p.Edits[0].OldString, "new_string": p.Edits[0].NewString})
	default:
		in.ToolName = "MultiEdit"
		in.ToolInput, err = json.Marshal(map[string]any{"file_path": p.FilePath, "edits": p.Edits})
	}
	return err
}

// toolCall maps postToolUse / postToolUseFailure onto the canonical call.
func toolCall(in *platform.Input, p payload) error {
	name := p.ToolName
	in.ToolUseID = p.ToolUseID
	if mcpTool, ok := strings.CutPrefix(name, "MCP:"); ok {
		in.ToolName = "mcp__cursor__" + mcpTool
		in.Bookkeeping = ownTools[mcpTool]
	} else if canon, ok := tools[name]; ok {
		in.ToolName = canon
	} else {
		in.ToolName = name
	}
	if recordedElsewhere[name] {
		in.Bookkeeping = true
	}
	in.ToolInput = platform.ObjectOf(p.ToolInput, "input")
	in.ToolInput = withPath(in.ToolName, in.ToolInput)
	if p.HookEventName == "postToolUseFailure" {
		msg := p.ErrorMessage
		if msg == "" {
			msg = p.FailureType
		}
		b, err := json.Marshal(platform.Failure{Error: msg, IsInterrupt: p.IsInterrupt, DurationMS: int64(p.Duration)})
		if err != nil {
			return err
		}
		in.ToolResponse = b
		return nil
	}
	in.ToolResponse = platform.ObjectOf(p.ToolOutput, "output")
	return nil
}

// withPath names Cursor's "path"/"target_file" argument file_path, as the canonical file
// tools have it.
func withPath(tool string, in json.RawMessage) json.RawMessage {
	if len(in) == 0 || (tool != "Read" && tool != "Delete" && tool != "LS") {
		return in
	}
	var m map[string]any
	if json.Unmarshal(in, &m) != nil {
		return in
	}
	if _, ok := m["file_path"]; ok {
		return in
	}
	for _, k := range []string{"path", "target_file", "file", "filePath"} {
		if v, ok := m[k].(string); ok {
			m["file_path"] = v
			b, err := json.Marshal(m)
			if err != nil {
				return in
			}
			return b
		}
	}
	return in
}

// Format implements platform.Adapter with Cursor's output shapes: sessionStart takes
// additional_context, beforeSubmitPrompt must say continue, the rest take {}.
func (Adapter) Format(event string, res platform.Result) ([]byte, error) {
	var v any = map[string]any{}
	switch event {
	case platform.EventContext:
		if res.AdditionalContext != "" {
			v = map[string]any{"additional_context": res.AdditionalContext}
		}
	case platform.EventSessionInit:
		v = map[string]any{"continue": true}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// LastAssistantMessage implements platform.Adapter: Cursor passes the agent's reply in
// afterAgentResponse's payload, so the transcript is not read.
func (Adapter) LastAssistantMessage(string) (string, error) { return "", nil }

// MCPTool implements platform.Adapter: Cursor shows MCP tools to the model by their own
// name.
func (Adapter) MCPTool(tool string) string { return tool }

// mcpEntry is memnode's server in Cursor's mcp.json.
func mcpEntry(binary string) []install.Field {
	return []install.Field{{Key: "command", Value: binary}, {Key: "args", Value: []string{"mcp"}}}
}

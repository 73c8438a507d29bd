package opencode

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/geminicli"
)

// Adapter is the platform.Adapter for memnode's OpenCode plugin.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload is what the plugin sends: a plugin hook's two arguments as OpenCode passed them
// ({input, output}), or a bus event ({event}), plus the session's directory and, for
// session.idle, the last assistant message the plugin read through OpenCode's client.
type payload struct {
	Cwd                  string          `json:"cwd"`
	Input                json.RawMessage `json:"input"`
	Output               json.RawMessage `json:"output"`
	Event                *busEvent       `json:"event"`
	LastAssistantMessage *string         `json:"last_assistant_message"`
}

type busEvent struct {
	Type       string `json:"type"`
	Properties struct {
		SessionID string `json:"sessionID"`
		Part      *struct {
			Type      string `json:"type"`
			Tool      string `json:"tool"`
			CallID    string `json:"callID"`
			SessionID string `json:"sessionID"`
			State     struct {
				Status string          `json:"status"`
				Input  json.RawMessage `json:"input"`
				Error  string          `json:"error"`
			} `json:"state"`
		} `json:"part"`
	} `json:"properties"`
}

// hookInput is a plugin hook's input argument.
type hookInput struct {
	SessionID string          `json:"sessionID"`
	Tool      string          `json:"tool"`
	CallID    string          `json:"callID"`
	Args      json.RawMessage `json:"args"`
}

// toolOutput is tool.execute.after's output argument.
type toolOutput struct {
	Title    string          `json:"title"`
	Output   json.RawMessage `json:"output"`
	Metadata struct {
		Exit *int `json:"exit"`
	} `json:"metadata"`
	// MCP tools answer {content, isError}.
	Content json.RawMessage `json:"content"`
	IsError bool            `json:"isError"`
}

// toolNames maps OpenCode's tool ids onto the canonical names.
var toolNames = map[string]string{
	"read": "Read", "edit": "Edit", "write": "Write", "bash": "Bash", "glob": "Glob",
	"grep": "Grep", "list": "LS", "webfetch": "WebFetch", "websearch": "WebSearch", "task": "Task",
	"patch": "Edit",
}

// bookkeeping are OpenCode's housekeeping tools (todowrite and todoread: Claude Code's
// names in lower case) and memnode's own MCP tools (OpenCode names MCP tools <server>_<tool>).
func bookkeeping(tool string) bool {
	return memory.Housekeeping(tool) || strings.HasPrefix(tool, install.MCPServerName+"_")
}

// argNames maps OpenCode's camelCase arguments onto Claude Code's.
var argNames = map[string]string{
	"filePath": "file_path", "oldString": "old_string", "newString": "new_string",
	"replaceAll": "replace_all",
}

// Normalize implements platform.Adapter. Unknown fields are ignored; fields of an
// unexpected type are an error (the hook then answers neutrally).
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode opencode payload: %w", err)
	}
	var hi hookInput
	if len(p.Input) > 0 && string(p.Input) != "null" {
		if err := json.Unmarshal(p.Input, &hi); err != nil {
			return platform.Input{}, fmt.Errorf("decode opencode hook input: %w", err)
		}
	}
	in := platform.Input{SessionID: hi.SessionID, Cwd: p.Cwd, LastAssistantMessage: p.LastAssistantMessage}
	if p.Event != nil {
		in.HookEventName = p.Event.Type
		in.SessionID = p.Event.Properties.SessionID
	}
	switch event {
	case platform.EventContext:
		in.HookEventName, in.Reason = "experimental.chat.system.transform", "startup"
	case platform.EventSessionInit:
		in.HookEventName = "chat.message"
		var out struct {
			Parts []struct {
				Type      string `json:"type"`
				Text      string `json:"text"`
				Synthetic bool   `json:"synthetic"`
			} `json:"parts"`
		}
		if len(p.Output) > 0 && string(p.Output) != "null" {
			if err := json.Unmarshal(p.Output, &out); err != nil {
				return platform.Input{}, fmt.Errorf("decode opencode chat.message: %w", err)
			}
		}
		var texts []string
		for _, part := range out.Parts {
			if part.Type == "text" && !part.Synthetic {
				texts = append(texts, part.Text)
			}
		}
		in.Prompt = unquote(strings.Join(texts, "\n"))
	case platform.EventObservation:
		if err := toolCall(&in, p, hi); err != nil {
			return platform.Input{}, err
		}
	case platform.EventFileContext:
		if err := fileRead(&in, p, hi); err != nil {
			return platform.Input{}, err
		}
	}
	return in, nil
}

// fileRead fills the file a read is about to open, from tool.execute.before ({args}).
func fileRead(in *platform.Input, p payload, hi hookInput) error {
	in.HookEventName, in.ToolUseID = "tool.execute.before", hi.CallID
	if hi.Tool != "read" || len(p.Output) == 0 || string(p.Output) == "null" {
		return nil
	}
	var out struct {
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(p.Output, &out); err != nil {
		return fmt.Errorf("decode opencode tool.execute.before: %w", err)
	}
	var args struct {
		FilePath string `json:"filePath"`
	}
	if len(out.Args) > 0 && string(out.Args) != "null" {
		if err := json.Unmarshal(out.Args, &args); err != nil {
			return fmt.Errorf("decode opencode read args: %w", err)
		}
	}
	in.ToolName, in.ToolInput = toolNames[hi.Tool], canonicalArgs(out.Args)
	if args.FilePath != "" {
		in.FilePaths = []string{args.FilePath}
	}
	return nil
}

// unquote drops the one pair of double quotes `opencode run "a b"` wraps a prompt in.
func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && !strings.Contains(s[1:len(s)-1], `"`) {
		return s[1 : len(s)-1]
	}
	return s
}

// toolCall fills the canonical call from tool.execute.after, or from a bus event of a tool
// that failed (a failed tool never reaches tool.execute.after).
func toolCall(in *platform.Input, p payload, hi hookInput) error {
	tool, args := hi.Tool, hi.Args
	var resp json.RawMessage
	if p.Event != nil {
		part := p.Event.Properties.Part
		if p.Event.Type != "message.part.updated" || part == nil || part.Type != "tool" || part.State.Status != "error" {
			return nil // not a tool call: nothing to record
		}
		tool, args, in.ToolUseID, in.SessionID = part.Tool, part.State.Input, part.CallID, part.SessionID
		in.HookEventName = "tool.error"
		resp = failure(part.State.Error)
	} else {
		in.HookEventName, in.ToolUseID = "tool.execute.after", hi.CallID
		var out toolOutput
		if len(p.Output) > 0 && string(p.Output) != "null" {
			if err := json.Unmarshal(p.Output, &out); err != nil {
				return fmt.Errorf("decode opencode tool output: %w", err)
			}
		}
		resp = response(tool, out)
	}
	if tool == "" {
		return nil
	}
	in.ToolName = tool
	if n, ok := toolNames[tool]; ok {
		in.ToolName = n
	}
	in.Bookkeeping = bookkeeping(tool)
	in.ToolInput = canonicalArgs(platform.NonNull(args))
	in.ToolResponse = resp
	return nil
}

func failure(msg string) json.RawMessage {
	b, _ := json.Marshal(platform.Failure{Error: msg})
	return b
}

// response is a tool's canonical response: bash's exit code decides success ({stdout,
// exit_code}, or a failure "Exit code N"); an MCP answer's text; anything else {output}.
func response(tool string, out toolOutput) json.RawMessage {
	var text string
	if json.Unmarshal(out.Output, &text) != nil && len(out.Content) > 0 {
		text = contentText(out.Content)
	}
	if out.IsError {
		return failure(text)
	}
	if tool == "bash" {
		code := 0
		if out.Metadata.Exit != nil {
			code = *out.Metadata.Exit
		}
		if code != 0 {
			return failure("Exit code " + strconv.Itoa(code) + "\n" + text)
		}
		b, _ := json.Marshal(map[string]any{"stdout": text, "exit_code": code})
		return b
	}
	if text == "" && out.Title == "" {
		return nil
	}
	b, _ := json.Marshal(map[string]string{"output": text})
	return b
}

func contentText(raw json.RawMessage) string {
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// canonicalArgs renames OpenCode's camelCase arguments.
func canonicalArgs(args json.RawMessage) json.RawMessage {
	var m map[string]any
	if len(args) == 0 || json.Unmarshal(args, &m) != nil {
		return args
	}
	for from, to := range argNames {
		if v, ok := m[from]; ok {
			if _, taken := m[to]; !taken {
				m[to] = v
			}
			delete(m, from)
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return b
}

// Format implements platform.Adapter: the plugin reads a flat {"additionalContext": …} (and
// pushes the session's onto the system prompt, adds a prompt's to the user's message as a
// synthetic text part, or appends a file's to the read's output); anything else is {}.
func (Adapter) Format(event string, res platform.Result) ([]byte, error) {
	switch event {
	case platform.EventContext, platform.EventSessionInit, platform.EventFileContext:
	default:
		return []byte("{}"), nil
	}
	if res.AdditionalContext == "" {
		return []byte("{}"), nil
	}
	return geminicli.EncodeJSON(map[string]string{"additionalContext": res.AdditionalContext})
}

// MCPTool implements platform.Adapter: OpenCode names MCP tools <server>_<tool>.
func (Adapter) MCPTool(tool string) string { return install.MCPServerName + "_" + tool }

// LastAssistantMessage implements platform.Adapter. OpenCode hands plugins no transcript
// file: the plugin passes the last message itself.
func (Adapter) LastAssistantMessage(string) (string, error) { return "", nil }

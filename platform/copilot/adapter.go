package copilot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/codex"
)

// Adapter is the platform.Adapter for Copilot CLI command hooks.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload has the fields of Copilot's hook input that memnode uses (camelCase; the event is
// known only from the command line).
type payload struct {
	SessionID      string          `json:"sessionId"`
	Cwd            string          `json:"cwd"`
	TranscriptPath string          `json:"transcriptPath"`
	Source         string          `json:"source"`
	Reason         string          `json:"reason"`
	Prompt         string          `json:"prompt"`
	ToolName       string          `json:"toolName"`
	ToolArgs       json.RawMessage `json:"toolArgs"`
	ToolResult     *struct {
		ResultType       string `json:"resultType"`
		TextResultForLlm string `json:"textResultForLlm"`
	} `json:"toolResult"`
	Error          json.RawMessage `json:"error"`
	StopHookActive bool            `json:"stop_hook_active"`
}

// hookEvents are Copilot's names of the events memnode hooks.
var hookEvents = map[string]string{
	platform.EventContext: "sessionStart", platform.EventSessionInit: "userPromptSubmitted",
	platform.EventObservation: "postToolUse", platform.EventFileContext: "postToolUse",
	platform.EventSummarize:  "agentStop",
	platform.EventSessionEnd: "sessionEnd",
}

// toolNames maps Copilot's built-in tools onto the canonical ones.
var toolNames = map[string]string{
	"view": "Read", "edit": "Edit", "create": "Write", "bash": "Bash", "grep": "Grep",
	"glob": "Glob", "task": "Task", "web_fetch": "WebFetch", "fetch": "WebFetch",
}

// bookkeeping are Copilot's housekeeping tools: never recorded.
var bookkeeping = map[string]bool{
	"report_intent": true, "update_todo": true, "think": true, "read_bash": true,
	"write_bash": true, "stop_bash": true, "list_bash": true,
}

// mcpPrefix starts memnode's own MCP tools as Copilot names them (<server>-<tool>).
const mcpPrefix = install.MCPServerName + "-"

// Normalize implements platform.Adapter.
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode copilot payload: %w", err)
	}
	in := platform.Input{
		SessionID:      p.SessionID,
		Cwd:            p.Cwd,
		TranscriptPath: p.TranscriptPath,
		HookEventName:  hookEvents[event],
		Prompt:         p.Prompt,
		ToolName:       p.ToolName,
		ToolInput:      platform.NonNull(p.ToolArgs),
		Bookkeeping:    bookkeeping[p.ToolName] || strings.HasPrefix(p.ToolName, mcpPrefix),
		StopHookActive: p.StopHookActive,
		Reason:         p.Reason,
	}
	if in.Reason == "" {
		in.Reason = p.Source
	}
	if event == platform.EventObservation {
		// A view, or a bash command that reads files (`cat`, `sed -n`, `head`), also asks
		// for their context: the one postToolUse hook records the call and answers with it.
		// (file-context, which an install from before registered beside it, has nothing
		// left to do.)
		in.FilePaths = readFiles(p, in.Cwd)
		canonicalCall(&in, p)
	}
	return in, nil
}

// readFiles are the files a successful view or bash command read (its postToolUse asks
// what memnode knows about them: bash's as Codex's shell reads, relative to cwd); none for
// any other tool.
func readFiles(p payload, cwd string) []string {
	if p.ToolResult == nil || (p.ToolResult.ResultType != "" && p.ToolResult.ResultType != "success") {
		return nil
	}
	switch p.ToolName {
	case "view":
	case "bash":
		var ti struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(platform.NonNull(p.ToolArgs), &ti) != nil {
			return nil
		}
		return codex.ReadFiles(ti.Command)
	default:
		return nil
	}
	var ti struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(canonicalInput("Read", platform.NonNull(p.ToolArgs), cwd), &ti) != nil || ti.FilePath == "" {
		return nil
	}
	return []string{ti.FilePath}
}

// exitLine is the line Copilot's bash tool ends its output with.
var exitLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\n?<shellId: [^>]* completed with exit code (-?\d+)>\s*$`)
})

// canonicalCall maps a Copilot call onto Claude Code's shapes: view → Read, edit → Edit,
// create → Write (path → file_path, old_str/new_str → old_string/new_string), bash → Bash
// whose non-zero exit (only in the result text) is a failure, MCP <server>-<tool> →
// mcp__<server>__<tool> for memnode's own server; a postToolUseFailure's error a Failure.
func canonicalCall(in *platform.Input, p payload) {
	name := toolNames[p.ToolName]
	if name != "" {
		in.ToolName = name
		in.ToolInput = canonicalInput(name, in.ToolInput, in.Cwd)
	} else if tool, ok := strings.CutPrefix(p.ToolName, mcpPrefix); ok {
		in.ToolName = "mcp__" + install.MCPServerName + "__" + tool
	}
	if msg, ok := errorText(p.Error); ok {
		in.ToolResponse = mustJSON(platform.Failure{Error: msg})
		return
	}
	if p.ToolResult == nil {
		return
	}
	text := p.ToolResult.TextResultForLlm
	if in.ToolName == "Bash" {
		code := 0
		if m := exitLine().FindStringSubmatch(text); m != nil {
			code, _ = strconv.Atoi(m[1])
			text = text[:len(text)-len(m[0])]
		}
		if code != 0 {
			in.ToolResponse = mustJSON(platform.Failure{Error: fmt.Sprintf("Exit code %d\n%s", code, text)})
			return
		}
		in.ToolResponse = mustJSON(map[string]any{"stdout": text, "exit_code": 0})
		return
	}
	if p.ToolResult.ResultType != "" && p.ToolResult.ResultType != "success" {
		in.ToolResponse = mustJSON(platform.Failure{Error: text})
		return
	}
	in.ToolResponse = mustJSON(map[string]string{"output": text})
}

// errorText reads postToolUseFailure's error: a string, or an object with a message.
func errorText(raw json.RawMessage) (string, bool) {
	raw = platform.NonNull(raw)
	if raw == nil {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var o struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Message != "" {
		return o.Message, true
	}
	return string(raw), true
}

// canonicalInput renames Copilot's fields to Claude Code's; relative paths are resolved
// against the session's cwd.
func canonicalInput(name string, raw json.RawMessage, cwd string) json.RawMessage {
	var in map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &in) != nil {
		return raw
	}
	rename := func(from, to string) {
		if v, ok := in[from]; ok {
			if _, taken := in[to]; !taken {
				in[to] = v
			}
			delete(in, from)
		}
	}
	switch name {
	case "Read", "Edit", "Write":
		rename("path", "file_path")
		rename("old_str", "old_string")
		rename("new_str", "new_string")
		rename("file_text", "content")
		if fp, ok := in["file_path"].(string); ok && fp != "" && !filepath.IsAbs(fp) && cwd != "" {
			in["file_path"] = filepath.Join(cwd, fp)
		}
		if r, ok := in["view_range"].([]any); ok && len(r) == 2 {
			if s, ok := r[0].(float64); ok && s >= 1 {
				in["offset"] = s
				if e, ok := r[1].(float64); ok && e >= s {
					in["limit"] = e - s + 1
				}
			}
			delete(in, "view_range")
		}
	}
	return mustJSON(in)
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

// Format implements platform.Adapter: Copilot takes context as a flat
// {"additionalContext": …} from sessionStart, userPromptSubmitted and (the observation's
// file context after a view or a bash read) postToolUse (its hookSpecificOutput shape does
// not reach the model); every other answer is neutral.
func (Adapter) Format(event string, res platform.Result) ([]byte, error) {
	if (event != platform.EventContext && event != platform.EventSessionInit && event != platform.EventObservation) || res.AdditionalContext == "" {
		return []byte("{}"), nil
	}
	b := mustJSON(map[string]string{"additionalContext": res.AdditionalContext})
	if b == nil {
		return nil, fmt.Errorf("encode copilot output")
	}
	return b, nil
}

// MCPTool implements platform.Adapter: Copilot names MCP tools <server>-<tool>.
func (Adapter) MCPTool(tool string) string { return mcpPrefix + tool }

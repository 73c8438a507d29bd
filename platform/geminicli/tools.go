package geminicli

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// The tools of the Gemini CLI family (Gemini CLI, its fork Qwen Code, its successor
// Antigravity) share names and fields: read_file, write_file, run_shell_command, glob,
// grep_search, … This file maps them onto the canonical tool call (platform.Input's doc),
// for this package and for its siblings.

// toolNames maps the family's built-in tool names onto the canonical ones. Qwen Code calls
// Gemini CLI's replace "edit".
var toolNames = map[string]string{
	"read_file": "Read", "replace": "Edit", "edit": "Edit", "write_file": "Write",
	"run_shell_command": "Bash", "glob": "Glob", "grep_search": "Grep", "grep": "Grep",
	"search_file_content": "Grep", "list_directory": "LS", "web_fetch": "WebFetch",
	"google_web_search": "WebSearch", "web_search": "WebSearch",
	"task": "Task", "agent": "Task",
}

// bookkeepingTools manage the agent's own state (todos, loading deferred tools): never
// recorded.
var bookkeepingTools = map[string]bool{
	"write_todos": true, "todo_write": true, "tool_search": true, "exit_plan_mode": true,
	"enter_plan_mode": true, "ask_user_question": true,
}

// Call is one tool call in canonical form.
type Call struct {
	Name     string
	Input    json.RawMessage
	Response json.RawMessage
	// Bookkeeping marks the agent's housekeeping and memnode's own MCP tools.
	Bookkeeping bool
}

// Result is how the family reports a tool's outcome.
type Result struct {
	// LLMContent is what the model got: a string, or a list of parts for MCP tools.
	LLMContent json.RawMessage `json:"llmContent"`
	// ReturnDisplay is what the user saw: a string, or for file edits an object.
	ReturnDisplay json.RawMessage `json:"returnDisplay"`
	// Error is set when the tool failed (Gemini CLI: {message, type}); FailText, when set,
	// is the failure as a string (Qwen Code's PostToolUseFailure "error").
	Error    *toolError `json:"error"`
	FailText *string    `json:"-"`
	// Interrupted and DurationMS describe a failed call where the agent reports them.
	Interrupted bool  `json:"-"`
	DurationMS  int64 `json:"-"`
}

type toolError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

// CanonicalMCP maps an MCP tool name, given as mcp__<server>__<tool> or Gemini CLI's
// mcp_<server>_<tool> (a server name has no "_"), to Claude Code's mcp__<server>__<tool>.
func CanonicalMCP(name string) (string, bool) {
	if strings.HasPrefix(name, "mcp__") {
		return name, strings.Count(name, "__") >= 2
	}
	rest, ok := strings.CutPrefix(name, "mcp_")
	if !ok {
		return "", false
	}
	server, tool, ok := strings.Cut(rest, "_")
	if !ok || server == "" || tool == "" {
		return "", false
	}
	return "mcp__" + server + "__" + tool, true
}

// Canonical maps one call of a family tool (its name, the model's arguments and its
// result) to the canonical call.
func Canonical(name string, input json.RawMessage, res Result) Call {
	c := Call{Name: name, Input: input}
	if mcp, ok := CanonicalMCP(name); ok {
		c.Name = mcp
		c.Bookkeeping = strings.HasPrefix(mcp, "mcp__"+install.MCPServerName+"__")
	} else if n, ok := toolNames[name]; ok {
		c.Name = n
	}
	c.Bookkeeping = c.Bookkeeping || bookkeepingTools[name]
	c.Input = canonicalInput(c.Name, input)
	c.Response = canonicalResponse(c.Name, res)
	return c
}

// canonicalInput renames the fields that differ from Claude Code's.
func canonicalInput(name string, input json.RawMessage) json.RawMessage {
	var in map[string]any
	if len(input) == 0 || json.Unmarshal(input, &in) != nil {
		return input
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
	case "Read":
		// Gemini CLI reads lines start_line..end_line (1-based, inclusive).
		if s, ok := in["start_line"].(float64); ok {
			in["offset"] = s
			if e, ok := in["end_line"].(float64); ok && e >= s {
				in["limit"] = e - s + 1
			}
			delete(in, "start_line")
			delete(in, "end_line")
		}
		rename("absolute_path", "file_path")
		rename("path", "file_path")
	case "Edit", "Write":
		rename("absolute_path", "file_path")
	case "Glob", "Grep", "LS":
		rename("dir_path", "path")
		rename("include", "glob")
	case "Bash":
		rename("dir_path", "workdir")
		rename("directory", "workdir")
	}
	b, err := json.Marshal(in)
	if err != nil {
		return input
	}
	return b
}

// canonicalResponse turns a result into the tool's canonical response: a failure as
// platform.Failure, a shell run as {stdout, exit_code} (a non-zero exit is a failure), a
// file edit with the file's original content, anything else as {output}.
func canonicalResponse(name string, res Result) json.RawMessage {
	text := contentText(res.LLMContent)
	fail := func(msg string) json.RawMessage {
		b, _ := json.Marshal(platform.Failure{Error: msg, IsInterrupt: res.Interrupted, DurationMS: res.DurationMS})
		return b
	}
	switch {
	case res.FailText != nil:
		if name == "Bash" {
			if out, code, ok := ShellOutput(*res.FailText); ok {
				return fail("Exit code " + strconv.Itoa(max(code, 1)) + "\n" + out)
			}
		}
		return fail(*res.FailText)
	case res.Error != nil:
		msg := res.Error.Message
		if msg == "" {
			msg = text
		}
		return fail(msg)
	case len(res.LLMContent) == 0 && len(res.ReturnDisplay) == 0:
		return nil
	}
	switch name {
	case "Bash":
		out, code, ok := ShellOutput(text)
		if !ok {
			out = text
		}
		if code != 0 {
			return fail("Exit code " + strconv.Itoa(code) + "\n" + out)
		}
		b, _ := json.Marshal(map[string]any{"stdout": out, "exit_code": code})
		return b
	case "Edit", "Write":
		var d struct {
			FilePath        string `json:"filePath"`
			OriginalContent string `json:"originalContent"`
			NewContent      string `json:"newContent"`
			IsNewFile       bool   `json:"isNewFile"`
		}
		if json.Unmarshal(res.ReturnDisplay, &d) == nil && d.FilePath != "" {
			r := map[string]any{"filePath": d.FilePath, "originalFile": d.OriginalContent, "output": text}
			if name == "Write" {
				r["content"] = d.NewContent
				r["type"] = "update"
				if d.IsNewFile {
					r["type"] = "create"
				}
			}
			b, _ := json.Marshal(r)
			return b
		}
	}
	b, _ := json.Marshal(map[string]string{"output": text})
	return b
}

// contentText is llmContent as text: a string, or the text of a list of parts.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	texts := make([]string, 0, len(parts))
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// shellFields are the lines that follow a shell run's output in the family's report.
var shellFields = []string{"Error: ", "Exit Code: ", "Signal: ", "Background PIDs: ", "Process Group PGID: "}

// ShellOutput reads the family's report of a shell run ("Output: …\nExit Code: N\n…",
// possibly wrapped in <untrusted_context>): the output and the exit code (0 when the report
// has none: Gemini CLI writes the line only for a non-zero exit). ok is false when text is
// not such a report.
func ShellOutput(text string) (out string, code int, ok bool) {
	text = strings.TrimSpace(text)
	text = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(text, "<untrusted_context>"), "</untrusted_context>"))
	lines := strings.Split(text, "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "Output:") {
			start = i
			break
		}
	}
	if start < 0 {
		return "", 0, false
	}
	var outLines []string
	first := strings.TrimSpace(strings.TrimPrefix(lines[start], "Output:"))
	if first != "" && first != "(empty)" {
		outLines = append(outLines, first)
	}
	i := start + 1
	for ; i < len(lines); i++ {
		if isShellField(lines[i]) {
			break
		}
		outLines = append(outLines, lines[i])
	}
	for ; i < len(lines); i++ {
		if v, found := strings.CutPrefix(lines[i], "Exit Code: "); found {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				code = n
			}
		}
		if v, found := strings.CutPrefix(lines[i], "Error: "); found && strings.TrimSpace(v) != "(none)" && strings.TrimSpace(v) != "" {
			outLines = append(outLines, strings.TrimSpace(v))
		}
	}
	return strings.Join(outLines, "\n"), code, true
}

func isShellField(l string) bool {
	for _, f := range shellFields {
		if strings.HasPrefix(l, f) {
			return true
		}
	}
	return false
}

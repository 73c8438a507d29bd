package antigravity

import (
	"encoding/json"
	"strings"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/geminicli"
)

// call is one Antigravity tool call in canonical form.
type call struct {
	Name        string
	Input       json.RawMessage
	Bookkeeping bool
}

// tool is how one Antigravity tool maps onto a canonical one: its name, and its
// PascalCase arguments onto the canonical fields (nil: arguments kept as they are).
type tool struct {
	name   string
	fields map[string]string
}

// tools are Antigravity's built-in tools (their arguments are PascalCase).
var tools = map[string]tool{
	"view_file":                  {"Read", map[string]string{"AbsolutePath": "file_path", "StartLine": "offset", "EndLine": "end_line"}},
	"write_to_file":              {"Write", map[string]string{"TargetFile": "file_path", "CodeContent": "content"}},
	"replace_file_content":       {"Edit", map[string]string{"TargetFile": "file_path", "TargetContent": "old_string", "ReplacementContent": "new_string"}},
	"edit_file":                  {"Edit", map[string]string{"TargetFile": "file_path", "TargetContent": "old_string", "ReplacementContent": "new_string"}},
	"multi_replace_file_content": {"MultiEdit", map[string]string{"TargetFile": "file_path", "ReplacementChunks": "edits"}},
	"run_command":                {"Bash", map[string]string{"CommandLine": "command", "Cwd": "workdir"}},
	"list_dir":                   {"LS", map[string]string{"DirectoryPath": "path"}},
	"grep_search":                {"Grep", map[string]string{"SearchPath": "path", "Query": "pattern", "Includes": "glob"}},
	"find_by_name":               {"Glob", map[string]string{"SearchDirectory": "path", "Pattern": "pattern"}},
	"read_url_content":           {"WebFetch", map[string]string{"Url": "url"}},
	"search_web":                 {"WebSearch", map[string]string{"query": "query", "Query": "query"}},
	"browser_subagent":           {"Task", map[string]string{"Task": "prompt"}},
}

// bookkeeping tools manage the agent's own state (permissions, questions, background
// task polling, plans): never recorded.
var bookkeeping = map[string]bool{
	"list_permissions": true, "ask_permission": true, "ask_question": true, "notify_user": true,
	"command_status": true, "send_command_input": true, "task_boundary": true, "update_plan": true,
}

// canonical maps one Antigravity tool call onto the canonical call.
func canonical(name string, args json.RawMessage) call {
	args = platform.ObjectOf(args, "args")
	if mcp, ok := geminicli.CanonicalMCP(name); ok {
		return call{Name: mcp, Input: args, Bookkeeping: strings.HasPrefix(mcp, "mcp__"+install.MCPServerName+"__")}
	}
	t, ok := tools[name]
	if !ok {
		return call{Name: name, Input: args, Bookkeeping: bookkeeping[name]}
	}
	return call{Name: t.name, Input: canonicalArgs(t, args)}
}

// canonicalArgs renames the arguments a canonical tool reads and decodes them (they may
// be double-encoded); Antigravity's own extras (toolAction, toolSummary, …) are dropped.
func canonicalArgs(t tool, args json.RawMessage) json.RawMessage {
	var in map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &in) != nil {
		return args
	}
	out := map[string]any{}
	for from, to := range t.fields {
		v, ok := in[from]
		if !ok {
			continue
		}
		switch to {
		case "offset", "end_line":
			if n, ok := argNumber(v); ok {
				out[to] = n
			}
		case "edits":
			out[to] = edits(v)
		default:
			if s, ok := argString(v); ok {
				out[to] = s
			}
		}
	}
	// Antigravity reads lines StartLine..EndLine (1-based, inclusive).
	if end, ok := out["end_line"].(float64); ok {
		if start, ok := out["offset"].(float64); ok && end >= start {
			out["limit"] = end - start + 1
		}
		delete(out, "end_line")
	}
	b, err := json.Marshal(out)
	if err != nil {
		return args
	}
	return b
}

// edits maps ReplacementChunks ([{TargetContent, ReplacementContent}], possibly sent as a
// string) onto MultiEdit's [{old_string, new_string}].
func edits(raw json.RawMessage) []map[string]string {
	if s, ok := argString(raw); ok {
		raw = json.RawMessage(s)
	}
	var chunks []json.RawMessage
	if json.Unmarshal(raw, &chunks) != nil {
		return nil
	}
	out := make([]map[string]string, 0, len(chunks))
	for _, c := range chunks {
		var ch map[string]json.RawMessage
		if s, ok := argString(c); ok {
			c = json.RawMessage(s)
		}
		if json.Unmarshal(c, &ch) != nil {
			continue
		}
		old, _ := argString(ch["TargetContent"])
		repl, _ := argString(ch["ReplacementContent"])
		out = append(out, map[string]string{"old_string": old, "new_string": repl})
	}
	return out
}

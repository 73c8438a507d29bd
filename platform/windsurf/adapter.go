package windsurf

import (
	"encoding/json"
	"fmt"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Adapter is the platform.Adapter for Cascade hooks.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload is a Cascade hook input: common fields and the event's tool_info
// (docs.windsurf.com/windsurf/cascade/hooks).
type payload struct {
	AgentActionName string   `json:"agent_action_name"`
	TrajectoryID    string   `json:"trajectory_id"`
	ExecutionID     string   `json:"execution_id"`
	ToolInfo        toolInfo `json:"tool_info"`
}

type toolInfo struct {
	// pre_user_prompt
	UserPrompt string `json:"user_prompt"`
	// post_read_code, post_write_code
	FilePath string `json:"file_path"`
	Edits    []edit `json:"edits"`
	// post_run_command
	CommandLine string `json:"command_line"`
	Cwd         string `json:"cwd"`
	// post_mcp_tool_use
	MCPServerName string          `json:"mcp_server_name"`
	MCPToolName   string          `json:"mcp_tool_name"`
	MCPArguments  json.RawMessage `json:"mcp_tool_arguments"`
	MCPResult     json.RawMessage `json:"mcp_result"`
	// post_cascade_response
	Response *string `json:"response"`
}

type edit struct {
	OldString string `json:"old_string"`
	NewString string `json:"new_string"`
}

// Normalize implements platform.Adapter. The session is Cascade's trajectory (one
// conversation). Only post_run_command names a directory; for the other events the hook's
// working directory stands in (Cascade runs hooks in the workspace root).
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode windsurf payload: %w", err)
	}
	ti := p.ToolInfo
	in := platform.Input{SessionID: p.TrajectoryID, HookEventName: p.AgentActionName, Cwd: ti.Cwd, Prompt: ti.UserPrompt}
	switch event {
	case platform.EventSummarize:
		in.LastAssistantMessage = ti.Response
		return in, nil
	case platform.EventObservation:
	default:
		return in, nil
	}
	var err error
	switch p.AgentActionName {
	case "post_read_code":
		in.ToolName = "Read"
		in.ToolInput, err = json.Marshal(map[string]string{"file_path": ti.FilePath})
	case "post_write_code":
		switch len(ti.Edits) {
		case 0:
			in.ToolName = "Write"
			in.ToolInput, err = json.Marshal(map[string]string{"file_path": ti.FilePath})
		case 1:
			in.ToolName = "Edit"
			in.ToolInput, err = json.Marshal(map[string]string{"file_path": ti.FilePath,
				"old_string": ti.Edits[0].OldString, "new_string": ti.Edits[0].NewString})
		default:
			in.ToolName = "MultiEdit"
			in.ToolInput, err = json.Marshal(map[string]any{"file_path": ti.FilePath, "edits": ti.Edits})
		}
	case "post_run_command":
		in.ToolName = "Bash"
		in.ToolInput, err = json.Marshal(map[string]string{"command": ti.CommandLine})
	case "post_mcp_tool_use":
		in.ToolName = "mcp__" + ti.MCPServerName + "__" + ti.MCPToolName
		in.Bookkeeping = ti.MCPServerName == install.MCPServerName
		in.ToolInput = platform.ObjectOf(ti.MCPArguments, "arguments")
		in.ToolResponse = platform.ObjectOf(ti.MCPResult, "result")
	}
	if err != nil {
		return platform.Input{}, fmt.Errorf("map windsurf %s: %w", p.AgentActionName, err)
	}
	return in, nil
}

// Format implements platform.Adapter: Cascade reads only a hook's exit code (and shows its
// output when show_output is on), so every answer is {}.
func (Adapter) Format(string, platform.Result) ([]byte, error) { return []byte("{}"), nil }

// LastAssistantMessage implements platform.Adapter: post_cascade_response carries the
// response, so no transcript is read.
func (Adapter) LastAssistantMessage(string) (string, error) { return "", nil }

// MCPTool implements platform.Adapter: Cascade shows MCP tools by their own name.
func (Adapter) MCPTool(tool string) string { return tool }

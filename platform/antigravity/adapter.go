package antigravity

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Adapter is the platform.Adapter for Antigravity's command hooks.
type Adapter struct{}

var _ platform.Adapter = Adapter{}

// payload has the fields of Antigravity's hook input that memnode uses. Every event
// carries conversationId, workspacePaths, transcriptPath and artifactDirectoryPath; then
// PreToolUse toolCall and stepIdx; PostToolUse stepIdx and error (and in some builds the
// toolCall); PreInvocation invocationNum (0 for a prompt's first model call); Stop
// terminationReason, error and fullyIdle.
type payload struct {
	ConversationID string    `json:"conversationId"`
	WorkspacePaths []string  `json:"workspacePaths"`
	TranscriptPath string    `json:"transcriptPath"`
	ToolCall       *toolCall `json:"toolCall"`
	StepIdx        *int      `json:"stepIdx"`
	Error          *string   `json:"error"`
	InvocationNum  *int      `json:"invocationNum"`
	InitialSteps   *int      `json:"initialNumSteps"`
	FullyIdle      *bool     `json:"fullyIdle"`
	Termination    string    `json:"terminationReason"`
}

type toolCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// Normalize implements platform.Adapter. The payload does not name its event: a tool
// payload with "error" is PostToolUse's, one with only a toolCall PreToolUse's.
//
// observation: Antigravity's PostToolUse carries no tool result, and in the builds whose
// payloads are known not even the tool, so a call is recorded from PreToolUse (what was
// read, edited or run, before it runs) and PostToolUse adds a record only when the call
// failed. session-init: the prompt is not in the payload; it is read from the transcript
// when the transcript already holds it (the user input at step initialNumSteps - 1), and a
// model call after the prompt's first (invocationNum > 0) is a continuation. summarize: a Stop while background tasks still run
// (fullyIdle false) is not the turn's end.
func (Adapter) Normalize(event string, raw []byte) (platform.Input, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return platform.Input{}, fmt.Errorf("decode antigravity payload: %w", err)
	}
	in := platform.Input{SessionID: p.ConversationID, TranscriptPath: p.TranscriptPath, Reason: p.Termination}
	if len(p.WorkspacePaths) > 0 {
		in.Cwd = p.WorkspacePaths[0]
	}
	switch event {
	case platform.EventObservation:
		normalizeTool(&p, &in)
	case platform.EventSessionInit:
		in.HookEventName = "PreInvocation"
		if p.InvocationNum != nil && *p.InvocationNum > 0 {
			in.Continuation = true
			break
		}
		prompt, index, err := lastUserPrompt(p.TranscriptPath)
		// The prompt of this execution is the conversation's last step before it
		// (initialNumSteps - 1); a transcript not written up to it yet holds an older one.
		current := p.InitialSteps == nil || index < 0 || index == *p.InitialSteps-1
		if err == nil && prompt != "" && current {
			in.Prompt = prompt
		} else {
			in.Continuation = true // nothing to record yet: the transcript comes later
		}
	case platform.EventSummarize:
		in.HookEventName = "Stop"
		in.StopHookActive = p.FullyIdle != nil && !*p.FullyIdle
	}
	return in, nil
}

// normalizeTool maps a PreToolUse or PostToolUse payload onto the canonical call.
func normalizeTool(p *payload, in *platform.Input) {
	if p.StepIdx != nil {
		in.ToolUseID = fmt.Sprintf("%s:%d", p.ConversationID, *p.StepIdx)
	}
	if p.Error == nil && p.ToolCall != nil {
		in.HookEventName = "PreToolUse"
		c := canonical(p.ToolCall.Name, p.ToolCall.Args)
		in.ToolName, in.ToolInput, in.Bookkeeping = c.Name, c.Input, c.Bookkeeping
		return
	}
	in.HookEventName = "PostToolUse"
	if p.Error == nil || *p.Error == "" {
		in.Bookkeeping = true // succeeded: PreToolUse recorded it
		return
	}
	resp, _ := json.Marshal(platform.Failure{Error: *p.Error})
	in.ToolResponse = resp
	if p.ToolCall != nil && p.ToolCall.Name != "" {
		c := canonical(p.ToolCall.Name, p.ToolCall.Args)
		in.ToolName, in.ToolInput, in.Bookkeeping = c.Name, c.Input, c.Bookkeeping
		return
	}
	// Which call failed is not in the payload: the record follows its PreToolUse one.
	in.ToolName = failedStep
	if p.StepIdx != nil {
		in.ToolInput, _ = json.Marshal(map[string]int{"step": *p.StepIdx})
	}
}

// failedStep names a failure whose tool PostToolUse did not say: the node's
// apitype.ToolFailedStep, which it records with the tool and input of the call of the same
// ToolUseID (its PreToolUse).
const failedStep = "failed_step"

// Format implements platform.Adapter. No Antigravity hook output reaches the model as
// context (PreToolUse answers a decision, Stop whether to continue), so memnode always
// answers the neutral {}: it never allows, denies or continues anything.
func (Adapter) Format(string, platform.Result) ([]byte, error) { return []byte("{}"), nil }

// MCPTool implements platform.Adapter: Antigravity, like Gemini CLI, shows MCP tools as
// mcp_<server>_<tool>.
func (Adapter) MCPTool(tool string) string { return "mcp_" + install.MCPServerName + "_" + tool }

// argString reads a tool argument that Antigravity sends either as a string or
// double-encoded (a JSON string holding a JSON string, `"\"a.txt\""`).
func argString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	var inner string
	if len(s) >= 2 && s[0] == '"' && json.Unmarshal([]byte(s), &inner) == nil {
		return inner, true
	}
	return s, true
}

// argNumber reads a numeric argument sent as a number or as a string ("2000").
func argNumber(raw json.RawMessage) (float64, bool) {
	var n float64
	if json.Unmarshal(raw, &n) == nil {
		return n, true
	}
	if s, ok := argString(raw); ok && json.Unmarshal([]byte(s), &n) == nil {
		return n, true
	}
	return 0, false
}

package hooks

import (
	"encoding/json"
	"time"

	"github.com/memnode/memnode/api/apitype"
)

// spoolLineVersion is the version of the spool lines this build writes.
const spoolLineVersion = 1

// spoolLine is the spool's line format (spool/events.jsonl, one JSON object per line, "\n"
// after each): an event a hook could not deliver. It is its own contract, apart from the
// HTTP body (apitype.Event) and the node's queue row, because its two sides may be different
// builds: the hook binary an agent runs writes it, the node that drains it may be newer (an
// upgrade while events wait) or older (a downgrade). Versions:
//
//   - v absent (0): written by hooks from before spool lines had a version — apitype.Event's
//     JSON of that time, whose field names version 1 keeps; read as version 1.
//   - v 1: the fields below. event_id is required (a line without one is skipped, as a torn
//     line is); at is RFC 3339; tool_input and tool_response are the tool's JSON as the
//     agent gave it, already cleaned of private and secret text by the hook.
//
// A reader takes the fields it knows from a line of a later version; a change that could not
// be read that way needs a new file name, not just a new version.
type spoolLine struct {
	V         int       `json:"v"`
	EventID   string    `json:"event_id"`
	Kind      string    `json:"kind"`
	Platform  string    `json:"platform"`
	SessionID string    `json:"session_id"`
	Project   string    `json:"project"`
	Cwd       string    `json:"cwd,omitempty"`
	At        time.Time `json:"at"`

	Prompt  string `json:"prompt,omitempty"`
	Private bool   `json:"private,omitempty"`

	ToolName     string          `json:"tool_name,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	AgentID      string          `json:"agent_id,omitempty"`
	AgentType    string          `json:"agent_type,omitempty"`

	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	Reason               string `json:"reason,omitempty"`
}

func spoolLineOf(ev apitype.Event) spoolLine {
	return spoolLine{V: spoolLineVersion, EventID: ev.EventID, Kind: ev.Kind, Platform: ev.Platform, SessionID: ev.SessionID,
		Project: ev.Project, Cwd: ev.Cwd, At: ev.At, Prompt: ev.Prompt, Private: ev.Private, ToolName: ev.ToolName,
		ToolUseID: ev.ToolUseID, ToolInput: ev.ToolInput, ToolResponse: ev.ToolResponse, AgentID: ev.AgentID,
		AgentType: ev.AgentType, LastAssistantMessage: ev.LastAssistantMessage, Reason: ev.Reason}
}

// event is the line as the event the node ingests.
func (l spoolLine) event() apitype.Event {
	return apitype.Event{EventID: l.EventID, Kind: l.Kind, Platform: l.Platform, SessionID: l.SessionID,
		Project: l.Project, Cwd: l.Cwd, At: l.At, Prompt: l.Prompt, Private: l.Private, ToolName: l.ToolName,
		ToolUseID: l.ToolUseID, ToolInput: l.ToolInput, ToolResponse: l.ToolResponse, AgentID: l.AgentID,
		AgentType: l.AgentType, LastAssistantMessage: l.LastAssistantMessage, Reason: l.Reason}
}

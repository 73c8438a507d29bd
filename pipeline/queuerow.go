package pipeline

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/memnode/memnode/api/apitype"
)

// queueRowVersion is the version of the queue rows this build writes.
const queueRowVersion = 1

// queueRow is one event as the durable queue keeps it (store.PendingEvent.Payload), written
// by Ingest and read by Build: the pipeline's own versioned JSON, apart from the HTTP body
// (apitype.Event) and the hooks' spool line (hooks.SpoolLine), so that each contract changes
// on its own. Rows outlive the process that wrote them (a node upgraded with events still
// queued reads its predecessor's rows), so a change here keeps reading every older version:
//
//   - v absent (0): written before rows had a version — apitype.Event's JSON of that time,
//     whose field names version 1 keeps, so it decodes as version 1.
//   - v 1: the fields below.
//
// A row of a later version than this build knows is read by the fields it knows (a node
// downgraded with events queued loses no event, only what it cannot understand).
type queueRow struct {
	V         int       `json:"v"`
	EventID   string    `json:"event_id"`
	Kind      string    `json:"kind"`
	Platform  string    `json:"platform"`
	SessionID string    `json:"session_id"`
	Project   string    `json:"project"`
	Cwd       string    `json:"cwd,omitempty"`
	At        time.Time `json:"at"`

	Prompt  string `json:"prompt,omitempty"`
	Private bool   `json:"private,omitempty"` // a wholly private prompt, or a summarize whose answer was withheld

	ToolName     string          `json:"tool_name,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	AgentID      string          `json:"agent_id,omitempty"`
	AgentType    string          `json:"agent_type,omitempty"`

	LastAssistantMessage string `json:"last_assistant_message,omitempty"`
	Reason               string `json:"reason,omitempty"`
}

// newQueueRow is the queue row of an event Ingest accepted (validated and cleaned).
func newQueueRow(ev apitype.Event) queueRow {
	return queueRow{V: queueRowVersion, EventID: ev.EventID, Kind: ev.Kind, Platform: ev.Platform, SessionID: ev.SessionID,
		Project: ev.Project, Cwd: ev.Cwd, At: ev.At, Prompt: ev.Prompt, Private: ev.Private, ToolName: ev.ToolName,
		ToolUseID: ev.ToolUseID, ToolInput: ev.ToolInput, ToolResponse: ev.ToolResponse, AgentID: ev.AgentID,
		AgentType: ev.AgentType, LastAssistantMessage: ev.LastAssistantMessage, Reason: ev.Reason}
}

// decodeQueueRow reads a queue row of any version (see queueRow).
func decodeQueueRow(payload []byte) (queueRow, error) {
	var r queueRow
	if err := json.Unmarshal(payload, &r); err != nil {
		return queueRow{}, fmt.Errorf("queue row: %w", err)
	}
	if r.V == 0 {
		r.V = queueRowVersion // the unversioned rows are version 1's fields
	}
	return r, nil
}

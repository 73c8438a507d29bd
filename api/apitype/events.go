package apitype

import (
	"encoding/json"
	"time"
)

// Event is what a hook sends to the node (POST /api/events) or spools when the node is
// unreachable. Every string in it has passed privacy.Clean in the hook process already.
// EventID is minted by the hook (random, 128 bits, hex) so that a spooled event replayed
// after an acknowledged send is stored once.
type Event struct {
	EventID   string    `json:"event_id"`
	Kind      string    `json:"kind"`
	Platform  string    `json:"platform"`
	SessionID string    `json:"session_id"`
	Project   string    `json:"project"`
	Cwd       string    `json:"cwd,omitempty"`
	At        time.Time `json:"at"`

	// memory.KindPrompt. Private is true when the whole prompt was private: nothing of it is
	// stored, and the tool calls of that turn are skipped by the node. On a
	// memory.KindSummarize event the node sets it when it withheld the answer of such a
	// turn: the session is still summarised, without that turn.
	Prompt  string `json:"prompt,omitempty"`
	Private bool   `json:"private,omitempty"`

	// memory.KindObservation.
	ToolName     string          `json:"tool_name,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	AgentID      string          `json:"agent_id,omitempty"`
	AgentType    string          `json:"agent_type,omitempty"`

	// memory.KindSummarize.
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`

	// memory.KindSessionStart / memory.KindSessionEnd: Claude Code's source / reason.
	Reason string `json:"reason,omitempty"`
}

// EventReply is the node's answer to POST /api/events.
type EventReply struct {
	OK     bool   `json:"ok"`
	Status string `json:"status"` // "queued", "stored", "duplicate" or "skipped"
	Reason string `json:"reason,omitempty"`
}

// FileObservation is one row of GET /api/observations/by-file.
type FileObservation struct {
	ID            string   `json:"id"`
	Short         string   `json:"short,omitempty"` // the ID's short form, as the other contexts show it
	SessionID     string   `json:"session_id"`
	Type          string   `json:"type"`
	Title         string   `json:"title"`
	CreatedAt     int64    `json:"created_at"` // epoch milliseconds
	FilesRead     []string `json:"files_read"`
	FilesModified []string `json:"files_modified"`
}

// FileObservations is the body of GET /api/observations/by-file.
type FileObservations struct {
	Observations []FileObservation `json:"observations"`
	// Repeat: the file's history was already answered in this session (session_id given).
	Repeat bool `json:"repeat,omitempty"`
}

// ToolFailedStep is the ToolName of a failure whose tool the agent's hook does not name
// (Antigravity's PostToolUse carries only the step and the error): its ToolUseID is the
// failed call's, and the node records the failure with that call's tool and input, so a
// failed command stays with its command.
const ToolFailedStep = "failed_step"

// Package ai turns captured tool calls into structured observations and session summaries.
// The offline compressor needs no key and is the default; model providers plug in behind the
// same Compressor interface.
package ai

import (
	"context"
	"encoding/json"
	"time"
)

// ToolCall is one captured tool call, already stripped of private content and secrets.
type ToolCall struct {
	SessionID    string          `json:"session_id"`
	Project      string          `json:"project"`
	Cwd          string          `json:"cwd,omitempty"`
	ToolName     string          `json:"tool_name"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Prompt is the user prompt of the turn the call belongs to, when known.
	Prompt string    `json:"prompt,omitempty"`
	At     time.Time `json:"at"`
}

// Observation is the structured memory of one or more tool calls.
type Observation struct {
	Type          string   `json:"type"`
	Title         string   `json:"title"`
	Subtitle      string   `json:"subtitle,omitempty"`
	Narrative     string   `json:"narrative,omitempty"`
	Facts         []string `json:"facts,omitempty"`
	Concepts      []string `json:"concepts,omitempty"`
	FilesRead     []string `json:"files_read,omitempty"`
	FilesModified []string `json:"files_modified,omitempty"`
	// Call is the 1-based position, among the calls Observe was given, of the one call this
	// observation is about; 0 when the compressor does not say (a model's observation may
	// cover several calls). The pipeline takes the record's tool, time and origin from that
	// call. Not part of any wire format.
	Call int `json:"-"`
}

// SessionInput is what a summary is made from.
type SessionInput struct {
	SessionID string `json:"session_id"`
	Project   string `json:"project"`
	// Request is the session's first (non-private) user prompt.
	Request string `json:"request,omitempty"`
	// LastAssistantMessage is the agent's final message, already cleaned.
	LastAssistantMessage string `json:"last_assistant_message"`
	// Observations made in this session so far, oldest first.
	Observations []Observation `json:"observations,omitempty"`
}

// Summary is the structured memory of a whole session.
type Summary struct {
	Request      string `json:"request,omitempty"`
	Investigated string `json:"investigated,omitempty"`
	Learned      string `json:"learned,omitempty"`
	Completed    string `json:"completed,omitempty"`
	NextSteps    string `json:"next_steps,omitempty"`
	Notes        string `json:"notes,omitempty"`
}

// Usage is what one compression cost.
type Usage struct {
	Model        string `json:"model"`
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
}

// Compressor turns tool calls into observations and sessions into summaries.
// Observe may return fewer observations than calls (a call worth nothing is skipped) and
// must be safe for concurrent use.
type Compressor interface {
	Name() string
	Observe(ctx context.Context, calls []ToolCall) ([]Observation, Usage, error)
	Summarize(ctx context.Context, in SessionInput) (Summary, Usage, error)
}

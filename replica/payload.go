package replica

import (
	"encoding/json"
	"fmt"
	"github.com/memnode/memnode/store"

	"github.com/memnode/memnode/memory"
)

// PayloadVersion is the version of the op payloads this build writes (field "v"). The rule
// that lets devices of different versions keep syncing (DESIGN.md, "Op payloads"):
//   - within a kind, a newer version only adds optional fields; a reader ignores fields it
//     does not know and applies the ones it does, whatever "v" says;
//   - a change an older reader would misapply is a new op kind, which older replicas store
//     and relay without interpreting (applyOne's default case);
//   - a payload is relayed as the bytes it arrived with, so fields this build does not know
//     reach newer devices intact.
//
// A payload without "v" is the form written before versioning (version 0); its fields are
// those of version 1.
const PayloadVersion = 1

// The payload types are the op-log's contract, apart from the domain types in memory and
// from the SQLite rows: renaming a domain field must not change what devices exchange.

type sessionPayload struct {
	V         int    `json:"v,omitempty"`
	ID        string `json:"id"`
	Project   string `json:"project"`
	Platform  string `json:"platform,omitempty"`
	StartedAt int64  `json:"started_at"`
	EndedAt   int64  `json:"ended_at,omitempty"`
	Status    string `json:"status"`
	Origin    string `json:"origin,omitempty"`
	HLC       uint64 `json:"hlc,omitempty"`
}

type promptPayload struct {
	V            int    `json:"v,omitempty"`
	ID           string `json:"id"`
	SessionID    string `json:"session_id"`
	Project      string `json:"project"`
	PromptNumber int    `json:"prompt_number"`
	Text         string `json:"text"`
	CreatedAt    int64  `json:"created_at"`
	Origin       string `json:"origin,omitempty"`
	HLC          uint64 `json:"hlc,omitempty"`
}

// observationPayload is memory.Observation's fields, in its order (the conversions in
// encodeObservation and decodeObservation compile only then), after the version.
type observationPayload struct {
	V int `json:"v,omitempty"`
	observationFields
}

type observationFields struct {
	ID              string   `json:"id"`
	SessionID       string   `json:"session_id"`
	Project         string   `json:"project"`
	Type            string   `json:"type"`
	Title           string   `json:"title"`
	Subtitle        string   `json:"subtitle,omitempty"`
	Narrative       string   `json:"narrative,omitempty"`
	Facts           []string `json:"facts,omitempty"`
	Concepts        []string `json:"concepts,omitempty"`
	FilesRead       []string `json:"files_read,omitempty"`
	FilesModified   []string `json:"files_modified,omitempty"`
	ToolName        string   `json:"tool_name,omitempty"`
	PromptNumber    int      `json:"prompt_number,omitempty"`
	DiscoveryTokens int      `json:"discovery_tokens,omitempty"`
	Model           string   `json:"model,omitempty"`
	ContentHash     string   `json:"content_hash,omitempty"`
	CreatedAt       int64    `json:"created_at"`
	Origin          string   `json:"origin,omitempty"`
	HLC             uint64   `json:"hlc,omitempty"`
}

type summaryPayload struct {
	V               int    `json:"v,omitempty"`
	ID              string `json:"id"`
	SessionID       string `json:"session_id"`
	Project         string `json:"project"`
	Request         string `json:"request,omitempty"`
	Investigated    string `json:"investigated,omitempty"`
	Learned         string `json:"learned,omitempty"`
	Completed       string `json:"completed,omitempty"`
	NextSteps       string `json:"next_steps,omitempty"`
	Notes           string `json:"notes,omitempty"`
	DiscoveryTokens int    `json:"discovery_tokens,omitempty"`
	Model           string `json:"model,omitempty"`
	CreatedAt       int64  `json:"created_at"`
	Origin          string `json:"origin,omitempty"`
	HLC             uint64 `json:"hlc,omitempty"`
}

type devicePayload struct {
	V      int    `json:"v,omitempty"`
	Origin string `json:"origin"`
	Name   string `json:"name"`
}

// forgetPayload is the payload of an OpForget.
type forgetPayload struct {
	V  int    `json:"v,omitempty"`
	ID string `json:"id"`
}

func encodeSession(s memory.Session) []byte {
	return mustJSON(sessionPayload{V: PayloadVersion, ID: s.ID, Project: s.Project, Platform: s.Platform,
		StartedAt: s.StartedAt, EndedAt: s.EndedAt, Status: s.Status, Origin: s.Origin, HLC: s.HLC})
}

func encodePrompt(p memory.Prompt) []byte {
	return mustJSON(promptPayload{V: PayloadVersion, ID: p.ID, SessionID: p.SessionID, Project: p.Project,
		PromptNumber: p.PromptNumber, Text: p.Text, CreatedAt: p.CreatedAt, Origin: p.Origin, HLC: p.HLC})
}

func encodeObservation(o memory.Observation) []byte {
	return mustJSON(observationPayload{V: PayloadVersion, observationFields: observationFields(o)})
}

func encodeSummary(s memory.Summary) []byte {
	return mustJSON(summaryPayload{V: PayloadVersion, ID: s.ID, SessionID: s.SessionID, Project: s.Project,
		Request: s.Request, Investigated: s.Investigated, Learned: s.Learned, Completed: s.Completed,
		NextSteps: s.NextSteps, Notes: s.Notes, DiscoveryTokens: s.DiscoveryTokens, Model: s.Model,
		CreatedAt: s.CreatedAt, Origin: s.Origin, HLC: s.HLC})
}

func encodeDevice(d memory.Device) []byte {
	return mustJSON(devicePayload{V: PayloadVersion, Origin: d.Origin, Name: d.Name})
}

func encodeForget(id string) []byte {
	return mustJSON(forgetPayload{V: PayloadVersion, ID: id})
}

// decode reads a payload of any version into p and checks that the key it names (*key) is
// set. Unknown fields are ignored on purpose (see PayloadVersion).
func decode(payload []byte, p any, key *string) error {
	if err := json.Unmarshal(payload, p); err != nil {
		return fmt.Errorf("%w: %w", store.ErrBadOp, err)
	}
	if *key == "" {
		return fmt.Errorf("%w: payload without its key", store.ErrBadOp)
	}
	return nil
}

func decodeSession(b []byte) (memory.Session, error) {
	var p sessionPayload
	if err := decode(b, &p, &p.ID); err != nil {
		return memory.Session{}, err
	}
	return memory.Session{ID: p.ID, Project: p.Project, Platform: p.Platform, StartedAt: p.StartedAt,
		EndedAt: p.EndedAt, Status: p.Status, Origin: p.Origin, HLC: p.HLC}, nil
}

func decodePrompt(b []byte) (memory.Prompt, error) {
	var p promptPayload
	if err := decode(b, &p, &p.ID); err != nil {
		return memory.Prompt{}, err
	}
	return memory.Prompt{ID: p.ID, SessionID: p.SessionID, Project: p.Project, PromptNumber: p.PromptNumber,
		Text: p.Text, CreatedAt: p.CreatedAt, Origin: p.Origin, HLC: p.HLC}, nil
}

func decodeObservation(b []byte) (memory.Observation, error) {
	var p observationPayload
	if err := decode(b, &p, &p.ID); err != nil {
		return memory.Observation{}, err
	}
	return memory.Observation(p.observationFields), nil
}

func decodeSummary(b []byte) (memory.Summary, error) {
	var p summaryPayload
	if err := decode(b, &p, &p.ID); err != nil {
		return memory.Summary{}, err
	}
	return memory.Summary{ID: p.ID, SessionID: p.SessionID, Project: p.Project, Request: p.Request,
		Investigated: p.Investigated, Learned: p.Learned, Completed: p.Completed, NextSteps: p.NextSteps,
		Notes: p.Notes, DiscoveryTokens: p.DiscoveryTokens, Model: p.Model, CreatedAt: p.CreatedAt,
		Origin: p.Origin, HLC: p.HLC}, nil
}

func decodeDevice(b []byte) (memory.Device, error) {
	var p devicePayload
	if err := decode(b, &p, &p.Origin); err != nil {
		return memory.Device{}, err
	}
	return memory.Device{Origin: p.Origin, Name: p.Name}, nil
}

func decodeForget(b []byte) (string, error) {
	var p forgetPayload
	if err := decode(b, &p, &p.ID); err != nil {
		return "", err
	}
	return p.ID, nil
}

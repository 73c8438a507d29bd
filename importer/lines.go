package importer

import (
	"slices"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// The line types below are the export format's own (docs/EXPORT_FORMAT.md, version
// FormatVersion): the JSON contract of a file that outlives the binary that wrote it. They
// are kept apart from the domain records (memory), which are also database rows and API
// bodies, so that a change there never changes the format silently; Line.record and lineOf
// convert. A new field is added here and in the format doc; renaming or removing one, or
// changing its meaning, is a new FormatVersion whose reader still accepts the older lines.

// Line is one line of an export as it is written: a kind and exactly one payload field
// (a tombstone carries ID instead).
type Line struct {
	Kind        string           `json:"kind"`
	Header      *Header          `json:"header,omitempty"`
	Device      *DeviceLine      `json:"device,omitempty"`
	Session     *SessionLine     `json:"session,omitempty"`
	Prompt      *PromptLine      `json:"prompt,omitempty"`
	Observation *ObservationLine `json:"observation,omitempty"`
	Summary     *SummaryLine     `json:"summary,omitempty"`
	ID          string           `json:"id,omitempty"`
	ClaudeMemID int64            `json:"claude_mem_id,omitempty"`
	Supersede   *SupersedeLine   `json:"supersede,omitempty"`
}

// SupersedeLine is a correction (version 2): the observation Old is replaced by New.
type SupersedeLine struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// DeviceLine is a device's name (an LWW register).
type DeviceLine struct {
	Origin string `json:"origin"`
	Name   string `json:"name"`
}

// SessionLine is a session (an LWW register decided by HLC).
type SessionLine struct {
	ID        string `json:"id"`
	Project   string `json:"project"`
	Platform  string `json:"platform,omitempty"`
	StartedAt int64  `json:"started_at"`
	EndedAt   int64  `json:"ended_at,omitempty"`
	Status    string `json:"status"`
	Origin    string `json:"origin,omitempty"`
	HLC       uint64 `json:"hlc,omitempty"`
}

// PromptLine is a user prompt.
type PromptLine struct {
	ID           string `json:"id"`
	SessionID    string `json:"session_id"`
	Project      string `json:"project"`
	PromptNumber int    `json:"prompt_number"`
	Text         string `json:"text"`
	CreatedAt    int64  `json:"created_at"`
	Origin       string `json:"origin,omitempty"`
	HLC          uint64 `json:"hlc,omitempty"`
}

// ObservationLine is an observation: memory.Observation's fields in the same order (the
// conversions between the two compile only then), declared again so the export format is
// this package's contract, not the domain type's.
type ObservationLine struct {
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

// SummaryLine is a session summary.
type SummaryLine struct {
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

// record is the line as the domain's record (what Reader returns).
func (l *Line) record() Record {
	r := Record{Kind: l.Kind, Header: l.Header, ID: l.ID, ClaudeMemID: l.ClaudeMemID}
	if s := l.Supersede; s != nil {
		r.Supersede = &store.Supersession{Old: s.Old, New: s.New}
	}
	if d := l.Device; d != nil {
		r.Device = &memory.Device{Origin: d.Origin, Name: d.Name}
	}
	if s := l.Session; s != nil {
		r.Session = &memory.Session{ID: s.ID, Project: s.Project, Platform: s.Platform, StartedAt: s.StartedAt,
			EndedAt: s.EndedAt, Status: s.Status, Origin: s.Origin, HLC: s.HLC}
	}
	if p := l.Prompt; p != nil {
		r.Prompt = &memory.Prompt{ID: p.ID, SessionID: p.SessionID, Project: p.Project, PromptNumber: p.PromptNumber,
			Text: p.Text, CreatedAt: p.CreatedAt, Origin: p.Origin, HLC: p.HLC}
	}
	if o := l.Observation; o != nil {
		// A conversion, not a field list: it compiles only while the two declare the same
		// fields (replica's TestObservationFieldsAgree checks their JSON names too).
		obs := memory.Observation(*o)
		obs.Facts, obs.Concepts = slices.Clone(o.Facts), slices.Clone(o.Concepts)
		obs.FilesRead, obs.FilesModified = slices.Clone(o.FilesRead), slices.Clone(o.FilesModified)
		r.Observation = &obs
	}
	if s := l.Summary; s != nil {
		r.Summary = &memory.Summary{ID: s.ID, SessionID: s.SessionID, Project: s.Project, Request: s.Request,
			Investigated: s.Investigated, Learned: s.Learned, Completed: s.Completed, NextSteps: s.NextSteps,
			Notes: s.Notes, DiscoveryTokens: s.DiscoveryTokens, Model: s.Model, CreatedAt: s.CreatedAt,
			Origin: s.Origin, HLC: s.HLC}
	}
	return r
}

// lineOf is the line a record is written as.
func lineOf(r Record) Line {
	l := Line{Kind: r.Kind, Header: r.Header, ID: r.ID, ClaudeMemID: r.ClaudeMemID}
	if s := r.Supersede; s != nil {
		l.Supersede = &SupersedeLine{Old: s.Old, New: s.New}
	}
	if d := r.Device; d != nil {
		l.Device = &DeviceLine{Origin: d.Origin, Name: d.Name}
	}
	if s := r.Session; s != nil {
		l.Session = &SessionLine{ID: s.ID, Project: s.Project, Platform: s.Platform, StartedAt: s.StartedAt,
			EndedAt: s.EndedAt, Status: s.Status, Origin: s.Origin, HLC: s.HLC}
	}
	if p := r.Prompt; p != nil {
		l.Prompt = &PromptLine{ID: p.ID, SessionID: p.SessionID, Project: p.Project, PromptNumber: p.PromptNumber,
			Text: p.Text, CreatedAt: p.CreatedAt, Origin: p.Origin, HLC: p.HLC}
	}
	if o := r.Observation; o != nil {
		line := ObservationLine(*o)
		l.Observation = &line
	}
	if s := r.Summary; s != nil {
		l.Summary = &SummaryLine{ID: s.ID, SessionID: s.SessionID, Project: s.Project, Request: s.Request,
			Investigated: s.Investigated, Learned: s.Learned, Completed: s.Completed, NextSteps: s.NextSteps,
			Notes: s.Notes, DiscoveryTokens: s.DiscoveryTokens, Model: s.Model, CreatedAt: s.CreatedAt,
			Origin: s.Origin, HLC: s.HLC}
	}
	return l
}

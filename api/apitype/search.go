package apitype

import "github.com/memnode/memnode/memory"

// Record kinds of Hit.Kind and Item.Kind.
const (
	KindObservation = "observation"
	KindSummary     = "summary"
	KindPrompt      = "prompt"
)

// Defaults the node applies when a request leaves a bound out.
const (
	DefaultLimit = 20 // SearchQuery.Limit
	DefaultDepth = 10 // TimelineQuery.Before and After
	MaxGet       = 100
)

// SearchQuery is GET /api/search; each field is the query parameter named by its tag
// (ObsTypes comma-joined, Since/Until epoch ms or an ISO date/time).
type SearchQuery struct {
	Text     string   `json:"query,omitempty"`
	Project  string   `json:"project,omitempty"`
	Type     string   `json:"type,omitempty"`     // all (default), observations, sessions, prompts
	ObsTypes []string `json:"obs_type,omitempty"` // bugfix, decision, …: observations only
	Device   string   `json:"device,omitempty"`   // origin ID or device name
	// File keeps observations that read or modified this file: the path as recorded, a
	// path relative to the project ("internal/auth/middleware.go") or a basename.
	File string `json:"file,omitempty"`
	// Platform keeps records of sessions recorded by this coding agent (claude-code,
	// codex, gemini-cli, …: the platform names of `memnode hook`).
	Platform string `json:"platform,omitempty"`
	Since    int64  `json:"since,omitempty"` // epoch ms, inclusive
	Until    int64  `json:"until,omitempty"` // epoch ms, exclusive
	Limit    int    `json:"limit,omitempty"`
	Offset   int    `json:"offset,omitempty"`
	Order    string `json:"order,omitempty"` // relevance (default with text), newest, oldest
	// Mode is the ranking: fts, vector or hybrid (default hybrid when the node has
	// embedded observations, else fts).
	Mode string `json:"mode,omitempty"`
	// Prefix makes the last word match as a prefix too (with exact matches first): for a
	// box someone is typing into, the viewer's. Agents' and CLI queries match words.
	Prefix bool `json:"prefix,omitempty"`
}

// Hit is one row of the compact index: enough to decide whether to look closer.
type Hit struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	// Short is the ID's short form (unique among the node's records, ≤ 12 characters,
	// usually 6): what the index shows; get and timeline accept it like the ID.
	Short     string `json:"short,omitempty"`
	Time      int64  `json:"time"` // epoch ms
	Type      string `json:"type"` // observation type; "session" for summaries, "prompt" for prompts
	Title     string `json:"title"`
	Project   string `json:"project"`
	SessionID string `json:"session_id,omitempty"`
	Origin    string `json:"origin,omitempty"`
	Device    string `json:"device,omitempty"` // the origin's device name when known
	// Platform is the coding agent whose session recorded the record ("" when unknown).
	Platform string  `json:"platform,omitempty"`
	Score    float64 `json:"score,omitempty"`  // lower is better: bm25, or the negated cosine / fused RRF score
	Anchor   bool    `json:"anchor,omitempty"` // timeline: the anchor item
	Links
}

// Links are an observation's corrections (POST /api/correct, /api/supersede), as short
// IDs: a record superseded by a stored one is left out of the session-start context, the
// file context and search, and shown by get and timeline with "superseded by".
type Links struct {
	SupersededBy []string `json:"superseded_by,omitempty"`
	Corrects     []string `json:"corrects,omitempty"` // the records this one supersedes
}

// Results is the answer of GET /api/search.
type Results struct {
	Query string `json:"query"`
	// Mode says how the text was matched: "any" (ranked by relevance: records with any
	// informative term), "all" (every term, for a time order), "all+any" (too few hits had
	// every term, so hits with any term follow), "recent" (no text), "none" (nothing
	// searchable in the text).
	Mode string `json:"mode"`
	// Ranking is the ranking used for a text query: fts, vector or hybrid.
	Ranking string `json:"ranking,omitempty"`
	Hits    []Hit  `json:"hits"`
}

// TimelineQuery is GET /api/timeline: the records around an anchor — a record ID,
// "S<session id>", an RFC 3339 / ISO date(-time), or, when Anchor is empty, the top hit of
// Query. Type and ObsTypes filter the records around the anchor (never the anchor
// itself) as they filter SearchQuery's hits.
type TimelineQuery struct {
	Anchor   string   `json:"anchor,omitempty"`
	Query    string   `json:"query,omitempty"`
	Before   int      `json:"before,omitempty"`
	After    int      `json:"after,omitempty"`
	Project  string   `json:"project,omitempty"`
	Device   string   `json:"device,omitempty"`
	Platform string   `json:"platform,omitempty"`
	Type     string   `json:"type,omitempty"`     // all (default), observations, sessions, prompts
	ObsTypes []string `json:"obs_type,omitempty"` // bugfix, decision, …: observations only
}

// Timeline is the answer of GET /api/timeline: observations, prompts and summaries
// interleaved in time order.
type Timeline struct {
	// AnchorID is the anchor record ("" for a time anchor); AnchorTime its time.
	AnchorID   string `json:"anchor_id,omitempty"`
	AnchorTime int64  `json:"anchor_time"`
	Items      []Hit  `json:"items"`
}

// IDs is the body of POST /api/records/batch and POST /api/forget.
type IDs struct {
	IDs []string `json:"ids"`
}

// Item is one full record.
type Item struct {
	Kind   string `json:"kind"`
	Device string `json:"device,omitempty"`
	// Short is the ID's short form (as Hit.Short); Platform the coding agent of the
	// record's session ("" when unknown).
	Short       string              `json:"short,omitempty"`
	Platform    string              `json:"platform,omitempty"`
	Observation *memory.Observation `json:"observation,omitempty"`
	Summary     *memory.Summary     `json:"summary,omitempty"`
	Prompt      *memory.Prompt      `json:"prompt,omitempty"`
	Links
}

// IDs returns the record's ID and its session's.
func (it Item) IDs() (id, session string) {
	switch {
	case it.Observation != nil:
		return it.Observation.ID, it.Observation.SessionID
	case it.Summary != nil:
		return it.Summary.ID, it.Summary.SessionID
	case it.Prompt != nil:
		return it.Prompt.ID, it.Prompt.SessionID
	}
	return "", ""
}

// Records is the answer of POST /api/records/batch: the records found, in the order asked,
// and the IDs that name nothing (never stored, or forgotten).
type Records struct {
	Items   []Item   `json:"items"`
	Missing []string `json:"missing,omitempty"`
}

// ForgetResult is the answer of POST /api/forget.
type ForgetResult struct {
	Requested int `json:"requested"`
	Found     int `json:"found"` // IDs that named a record this replica knew
	// Missing are the IDs, as given, that named no record or session here (they are
	// tombstoned anyway, in case the record is still on its way from another device).
	Missing []string `json:"missing,omitempty"`
}

// Note is the body of POST /api/memories: a memory saved by hand (the MCP save_memory
// tool, or `memnode save`).
type Note struct {
	Text    string `json:"text"`
	Title   string `json:"title,omitempty"`
	Project string `json:"project"`
	Type    string `json:"type,omitempty"` // default "note"
	// Scope is ScopeProject (the default: the note belongs to Project) or ScopeGlobal (it
	// heads the session-start context of every project; Project is ignored).
	Scope string `json:"scope,omitempty"`
	// Pin pins the note at once: it heads every session-start context of its project.
	Pin bool `json:"pin,omitempty"`
}

// Context is the answer of GET /api/context?format=json: the session-start context and
// what to tell the user.
type Context struct {
	// Text is the context block for the agent ("" when there is nothing to say).
	Text string `json:"text"`
	// UserMessage is one line for the user where the agent shows one (Claude Code's
	// systemMessage): "memnode: 42 memories from 7 sessions · viewer: memnode viewer".
	// Empty with the setting context_system_message_off.
	UserMessage string `json:"user_message,omitempty"`
	// Health is the one-line notice of what is degraded (also in Text), "" when healthy.
	Health string `json:"health,omitempty"`
}

// Note scopes.
const (
	ScopeProject = "project"
	ScopeGlobal  = "global"
)

// Pin is the body of POST /api/pin: pin (or, with Pinned false, unpin) the observation ID
// (or its short form).
type Pin struct {
	ID     string `json:"id"`
	Pinned bool   `json:"pinned"`
}

// PinResult is the answer of POST /api/pin.
type PinResult struct {
	ID      string `json:"id"`
	Short   string `json:"short,omitempty"`
	Project string `json:"project"`
	Title   string `json:"title"`
	Pinned  bool   `json:"pinned"`
}

// Correction is the body of POST /api/correct: the observation ID (or its short form) is
// wrong or outdated, and Text is what is true. The text becomes a new observation of type
// "correction" in the same project, which supersedes the old one.
type Correction struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// Supersede is the body of POST /api/supersede: the observation Old is replaced by the
// stored observation New.
type Supersede struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// SupersedeResult is the answer of POST /api/correct and POST /api/supersede: Old is now
// superseded by New (full IDs, and their short forms).
type SupersedeResult struct {
	Old      string `json:"old"`
	New      string `json:"new"`
	OldShort string `json:"old_short,omitempty"`
	NewShort string `json:"new_short,omitempty"`
}

// SaveResult is the answer of POST /api/memories.
type SaveResult struct {
	ID        string `json:"id,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

// ImportResult is the answer of POST /api/import: what one batch added.
type ImportResult struct {
	Devices      int `json:"devices"`
	Sessions     int `json:"sessions"`
	Prompts      int `json:"prompts"`
	Observations int `json:"observations"`
	Summaries    int `json:"summaries"`
	Tombstones   int `json:"tombstones"`
	Supersedes   int `json:"supersedes"`
	Skipped      int `json:"skipped"`
}

// Add accumulates another result.
func (a *ImportResult) Add(b ImportResult) {
	a.Devices += b.Devices
	a.Sessions += b.Sessions
	a.Prompts += b.Prompts
	a.Observations += b.Observations
	a.Summaries += b.Summaries
	a.Tombstones += b.Tombstones
	a.Supersedes += b.Supersedes
	a.Skipped += b.Skipped
}

// ExportEnd is the trailer line that ends a complete GET /api/export stream.
type ExportEnd struct {
	Kind  string `json:"kind"` // "end"
	Count int    `json:"count"`
}

// Health is the body of GET /health (no token needed, so it names nothing about the user:
// version 2 dropped data_dir, which told any local program or web page the user name).
type Health struct {
	Status  string `json:"status"`
	Ready   bool   `json:"ready"`
	PID     int    `json:"pid"`
	Version string `json:"version"`
	// API is the node's Version; 0 from a node older than this field.
	API int `json:"api,omitempty"`
	// Phase is what a starting node does now ("opening the database", "checking the
	// database", "migrating the database to schema 11", "ready"); Steps counts the phases
	// it went through, so a client waits while they move on. Empty/0 from an older node.
	Phase string `json:"phase,omitempty"`
	Steps uint64 `json:"steps,omitempty"`
	// Unbounded marks a phase that takes as long as its work with no step between (a schema
	// migration of a big database): a client waits for it without a stall bound.
	Unbounded bool `json:"unbounded,omitempty"`
}

// Error is the body of every error answer.
type Error struct {
	Error string `json:"error"`
}

// SemanticRequest is the body of POST /api/context/semantic.
type SemanticRequest struct {
	Prompt  string `json:"prompt"`
	Project string `json:"project"`
}

package store

// The index reads: what search asks of the full-text indexes and the record rows behind
// them. The caller decides what to ask (which terms rank, which only filter, how deep to
// look); the store knows how the answer is stored. Kinds are OpObservation, OpSummary and
// OpPrompt.

// SearchFilter restricts an index read to the records that pass every field set.
type SearchFilter struct {
	Project string
	// Since and Until bound the creation time, in epoch ms: Since ≤ t < Until (0: unbounded).
	Since, Until int64
	// Device is an origin or a device name.
	Device string
	// Platform is the coding agent whose session recorded the record.
	Platform string
	// Types are observation types (ignored for other kinds).
	Types []string
	// File keeps the observations that read or modified it: the path as stored (absolute or
	// relative to the project), or any path it is the end of at a '/' (a project-relative
	// path or a basename). Only observations touch files: another kind matches nothing.
	File string
	// Current leaves out observations superseded by a stored record (Supersede): what
	// default search shows. Timelines leave it unset, so a replaced record stays in place.
	Current bool
}

// IndexHit is what a search result shows of one record.
type IndexHit struct {
	ID        string
	Time      int64 // created_at, epoch ms
	Type      string
	Title     string // as stored: may span lines
	Project   string
	SessionID string
	Origin    string
	Device    string // the origin's device name, "" when unknown
	// Score: lower is better (bm25, or a read's own scoring); 0 where a read does not score.
	Score float64
	// Pos is the record's local arrival position (BestMatches only): the records of a
	// session stored one after another have consecutive positions.
	Pos int64
}

// Order is the order of a window read's answer.
type Order int

// Orders of a window read.
const (
	ByScore Order = iota // best score first, then newest
	Newest
	Oldest
)

// WindowQuery is a full-text read over a window of the matches: the Window newest matches
// by local arrival (the oldest with Order Oldest) that pass Filter are scored, ordered, and
// the first Limit returned. The window keeps a very frequent term as cheap as a rare one.
type WindowQuery struct {
	Match  string // FTS5 expression: selects and, in WindowMatches, ranks
	Also   string // optional FTS5 expression every hit must match too, without ranking (WindowMatches only)
	Filter SearchFilter
	Window int
	Order  Order
	Limit  int
}

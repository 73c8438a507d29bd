package store

import "github.com/memnode/memnode/memory"

// Batch is a set of local changes committed atomically with their ops and the IDs of the
// events they came from; the queue rows go right after. An event is stored exactly once:
// a queue row that outlives its commit (a crash in between) is recognised and dropped.
type Batch struct {
	Sessions     []memory.Session // created or changed (status, ended_at)
	States       []SessionState
	Prompts      []memory.Prompt
	Observations []memory.Observation
	Summaries    []memory.Summary
	// Claimed is each session's state as read when its events were claimed (Build starts
	// from it). Commit re-reads it in its own transaction and refuses the whole batch with
	// ErrStaleClaim when something else changed it since — a forget of the session's
	// current turn (turn_private) or of the prompt its first/last prompt text came from —
	// because records built from the old state would store what the forget removed. Nil
	// checks nothing (imports, tests).
	Claimed []SessionState
	// Done are pending-queue row IDs to delete; DoneEvents are their event IDs, remembered so
	// a replayed spool entry is not stored twice.
	Done       []int64
	DoneEvents []string
}

// CommitResult reports what a Commit stored.
type CommitResult struct {
	Observations []memory.Observation // as stored, with IDs (duplicates left out)
	Prompts      []memory.Prompt
	Summaries    []memory.Summary
	Duplicates   int
}

// ImportBatch holds records that already carry their global IDs: a memnode export, or a
// foreign database converted with deterministic IDs (see ImportID). Import stores them as
// local ops, so they replicate like anything recorded on this device.
type ImportBatch struct {
	Devices      []memory.Device
	Sessions     []memory.Session
	Prompts      []memory.Prompt
	Observations []memory.Observation
	Summaries    []memory.Summary
	// Tombstones are forgotten IDs; importing one forgets the record here too.
	Tombstones []string
	// Supersedes are corrections: each links two observations stored here (by this batch
	// or before), as Supersede does.
	Supersedes []Supersession
	// ClaudeMemIDs are the numbers claude-mem gave the records (kept for lookups, see
	// ClaudeMemRecord; local, not replicated).
	ClaudeMemIDs []ClaudeMemID
}

// ImportResult counts what Import stored; records already present (or forgotten) are
// Skipped, which is what makes a repeated import a no-op.
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

// ClaudeMemID maps the number claude-mem gave a record (its row id in one of claude-mem's
// tables) to the memnode ID the import derived for it.
type ClaudeMemID struct {
	Kind string // OpObservation, OpSummary or OpPrompt
	Num  int64
	ID   string
}

// Supersession is one link: Old is superseded by New.
type Supersession struct {
	Old, New string
}

// Record is one stored record of any kind: Kind (OpObservation, OpSummary or OpPrompt) says
// which field is set. Device is the name of the record's origin device, "" when unknown.
type Record struct {
	Kind        string
	Observation *memory.Observation
	Summary     *memory.Summary
	Prompt      *memory.Prompt
	Device      string
}

// Visitor receives records from Walk, kind by kind; a nil field skips that kind.
type Visitor struct {
	Device      func(memory.Device) error
	Session     func(memory.Session) error
	Prompt      func(memory.Prompt) error
	Observation func(memory.Observation) error
	Summary     func(memory.Summary) error
	Tombstone   func(id string) error
	// Supersede receives the links of stored observations to their stored replacements.
	Supersede func(Supersession) error
}

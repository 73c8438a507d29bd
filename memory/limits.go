package memory

import "time"

// Size limits shared by every way a record comes in (the HTTP API, MCP, device sync), so
// what one path accepts another never rejects.
const (
	// MaxNoteBytes caps the text of a note saved by hand (API, MCP save_memory, CLI): a
	// decision or a fact, not a file dump.
	MaxNoteBytes = 64 << 10
	// MaxTitleBytes caps a title given by hand.
	MaxTitleBytes = 1 << 10
	// MaxSessionIDBytes caps a session ID and an event ID at ingest: agents use UUIDs or
	// short names; a megabyte-long ID is an attack or a bug, refused with 400.
	MaxSessionIDBytes = 512
	// MaxProjectBytes caps a project name (a path at most: PATH_MAX).
	MaxProjectBytes = 4096
	// MaxRecordSize bounds one record as it replicates (its JSON op payload, bytes): the
	// replica refuses a larger one where it enters (import, notes) and the event pipeline
	// clips agent output to fit, so no record can stall device sync (ErrRecordTooLarge).
	MaxRecordSize = 1 << 20
)

// MaxFutureAt is how far ahead of this device's clock a record's time (an event's "at", a
// record's created_at) may be; a later one is clamped to it where it enters.
const MaxFutureAt = 24 * time.Hour

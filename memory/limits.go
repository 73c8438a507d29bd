package memory

// Size limits shared by every way a record comes in (the HTTP API, MCP, device sync), so
// what one path accepts another never rejects.
const (
	// MaxNoteBytes caps the text of a note saved by hand (API, MCP save_memory, CLI): a
	// decision or a fact, not a file dump.
	MaxNoteBytes = 64 << 10
	// MaxTitleBytes caps a title given by hand.
	MaxTitleBytes = 1 << 10
)

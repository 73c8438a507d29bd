package store

import "errors"

// PendingEvent is one hook event in the durable queue.
type PendingEvent struct {
	ID        int64
	EventID   string
	Kind      string
	SessionID string
	Project   string
	Payload   []byte // the event as the hook sent it (already cleaned)
	CreatedAt int64
	Attempts  int
}

// Claim is a session's events taken by one worker. The claim lives in memory only: a
// process that dies holds no claim, so nothing needs recovering at start.
type Claim struct {
	SessionID string
	Events    []PendingEvent
}

// MaxAttempts bounds how often an event is processed: one that failed this many times is
// moved to the dead letters instead of being retried (forever) again.
const MaxAttempts = 10

// SessionState is the local processing state of a session; it is never replicated.
type SessionState struct {
	SessionID   string
	PromptCount int
	TurnPrivate bool
	FirstPrompt string
	LastPrompt  string
}

// ErrStaleClaim means a session's state changed between the claim of its events and the
// commit of the records built from them — a forget ran in between. Nothing was stored; the
// claimer builds the batch again from the current state (pipeline does, at once).
var ErrStaleClaim = errors.New("session changed since its events were claimed")

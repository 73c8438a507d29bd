package replica

// SessionState is the local processing state of a session; it is never replicated.
type SessionState struct {
	SessionID   string
	PromptCount int
	TurnPrivate bool
	FirstPrompt string
	LastPrompt  string
}

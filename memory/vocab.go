package memory

import "strings"

// Observation types (claude-mem's vocabulary).
const (
	TypeBugfix    = "bugfix"
	TypeFeature   = "feature"
	TypeRefactor  = "refactor"
	TypeChange    = "change"
	TypeDiscovery = "discovery"
	TypeDecision  = "decision"
	// TypeCorrection is memnode's own: what is true about a memory that was wrong or
	// outdated, which it supersedes (memnode correct, MCP correct_memory).
	TypeCorrection = "correction"
)

// TypeEmoji marks observation types in compact rows (claude-mem's legend).
func TypeEmoji(t string) string {
	switch strings.ToLower(t) {
	case TypeBugfix:
		return "🔴"
	case TypeFeature:
		return "🟣"
	case TypeRefactor:
		return "🔄"
	case TypeChange:
		return "✅"
	case TypeDiscovery:
		return "🔵"
	case TypeDecision:
		return "⚖️"
	case TypeCorrection:
		return "✏️"
	default:
		return "•"
	}
}

// PlatformName is the platform name memnode records for an agent: claude-mem's
// platformSource "claude" (its value for Claude Code) and an empty one (claude-mem before
// it had several) are "claude-code"; every other name is itself.
func PlatformName(p string) string {
	if p == "claude" {
		return "claude-code"
	}
	return p
}

// EstimateTokens is a model-free token estimate: one token per four bytes, rounded up.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// Kinds of hook event, one per normalised lifecycle moment.
const (
	KindSessionStart = "session-start"
	KindPrompt       = "prompt"
	KindObservation  = "observation"
	KindSummarize    = "summarize"
	KindSessionEnd   = "session-end"
)

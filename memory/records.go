package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Session is a coding session of one IDE. Its mutable fields (EndedAt, Status) are an LWW
// register stamped by HLC.
type Session struct {
	ID        string `json:"id"`
	Project   string `json:"project"`
	Platform  string `json:"platform,omitempty"`
	StartedAt int64  `json:"started_at"` // epoch ms
	EndedAt   int64  `json:"ended_at,omitempty"`
	Status    string `json:"status"`
	Origin    string `json:"origin,omitempty"`
	HLC       uint64 `json:"hlc,omitempty"`
}

// Prompt is one user prompt (immutable).
type Prompt struct {
	ID           string `json:"id"`
	SessionID    string `json:"session_id"`
	Project      string `json:"project"`
	PromptNumber int    `json:"prompt_number"`
	Text         string `json:"text"`
	CreatedAt    int64  `json:"created_at"`
	Origin       string `json:"origin,omitempty"`
	HLC          uint64 `json:"hlc,omitempty"`
}

// Observation is the structured memory of tool calls (immutable).
type Observation struct {
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

// HashContent identifies an observation's content within its session, so an identical
// observation produced twice (a retried batch, a replayed event) is stored once. It is the
// value of ContentHash; every device must compute it the same way.
func (o *Observation) HashContent() string {
	h := sha256.New()
	for _, s := range []string{o.SessionID, o.Type, o.Title, o.Subtitle, o.Narrative,
		strings.Join(o.Facts, "\x1f"), strings.Join(o.FilesRead, "\x1f"), strings.Join(o.FilesModified, "\x1f")} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Summary is the structured memory of a session (immutable).
type Summary struct {
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

// Device names an origin; an LWW register.
type Device struct {
	Origin string `json:"origin"`
	Name   string `json:"name"`
}

// GlobalProject is the project of global notes (save_memory with scope "global", `memnode
// save --global`): they head the session-start context of every project. The parentheses
// keep it apart from any directory name a project takes.
const GlobalProject = "(global)"

// ManualSession is the session that groups the notes of a project saved by hand.
func ManualSession(project string) string { return "manual:" + project }

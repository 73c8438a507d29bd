// Package platform is the contract every coding agent memnode supports implements: an
// Adapter that turns the agent's hook payloads into one canonical Input (and a Result back
// into the agent's output format), and an Installer that adds memnode to the agent's
// configuration and removes exactly that again. Each agent lives in its own folder below
// this one (platform/claudecode, …); platform/registry lists them. Nothing outside an
// agent's folder decodes that agent's payloads: handlers and the compressor see one shape.
package platform

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/install"
)

// Memnode hook events: the <event> of `memnode hook <platform> <event>`. An agent's
// installer maps its own lifecycle events onto these.
const (
	EventContext     = "context"      // a session starts or resumes: inject memory
	EventSessionInit = "session-init" // the user sent a prompt
	EventFileContext = "file-context" // the agent is about to read files
	EventObservation = "observation"  // a tool call finished (or failed)
	EventSummarize   = "summarize"    // the agent's turn ended
	EventSessionEnd  = "session-end"  // the session ended
)

// Input is a hook payload in canonical form. Every string in it comes from the cleaned
// payload.
//
// The canonical tool call is Claude Code's shape, which the compressor reads: ToolName is
// one of Read, Edit, MultiEdit, Write, Bash, Grep, Glob, LS, WebFetch, WebSearch, Task,
// NotebookEdit (or mcp__<server>__<tool>, or any other name, described generically), and
// ToolInput/ToolResponse carry that tool's fields (file_path, old_string, command, …). An
// adapter for another agent maps its tool names and fields onto these. A failed call has a
// ToolResponse of {"error": "...", "is_interrupt": bool, "duration_ms": n}.
type Input struct {
	SessionID      string
	Cwd            string
	TranscriptPath string
	HookEventName  string

	// Prompt (session-init). PromptHadText and ProtocolOnly are set by the hook from the
	// raw payload: the only two facts taken from it.
	Prompt        string
	PromptHadText bool
	ProtocolOnly  bool
	// Continuation marks a prompt hook the agent fires again for a follow-up model request of
	// the same prompt (Qwen Code, with an empty prompt): nothing to record or inject.
	Continuation bool

	ToolName     string
	ToolUseID    string
	ToolInput    json.RawMessage
	ToolResponse json.RawMessage
	// Bookkeeping marks a call of the agent's own housekeeping (loading deferred tools, a
	// todo list, polling a background shell) or of memnode's own MCP tools: never recorded.
	Bookkeeping bool
	// FilePaths are the files a read is about to open (file-context).
	FilePaths []string

	AgentID   string
	AgentType string

	// StopHookActive marks a re-entered Stop hook.
	StopHookActive bool
	// LastAssistantMessage is set when the agent passes it directly.
	LastAssistantMessage *string

	// Reason is SessionStart's source or SessionEnd's reason.
	Reason string
}

// Failure is the canonical ToolResponse of a tool call that failed.
type Failure struct {
	Error       string `json:"error"`
	IsInterrupt bool   `json:"is_interrupt,omitempty"`
	DurationMS  int64  `json:"duration_ms,omitempty"`
}

// Result is what a handler hands back for the agent.
type Result struct {
	// AdditionalContext is injected into the agent's context (context, file-context).
	AdditionalContext string
	// SystemMessage is one line shown to the user at session start, where the agent shows
	// one (the systemMessage of Claude Code, Gemini CLI and Qwen Code); adapters of other
	// agents drop it.
	SystemMessage string
}

// Recorded is one hook call of a past session, rebuilt from the agent's transcript (an
// import): Event is a memnode hook event, Payload the agent's raw stdin JSON for it, ID the
// event ID to send (stable for the same call of the same transcript) and At when it happened.
type Recorded struct {
	Event   string
	Payload []byte
	ID      string
	At      time.Time
	// TurnPrompt is the raw prompt of the turn the call belongs to ("" before the first):
	// the importer drops the calls and the answer of a wholly private turn, as the node and
	// the Stop hook do live.
	TurnPrompt string
}

// Adapter translates between one agent's hook wire format and Input/Result.
type Adapter interface {
	// Normalize maps a payload (a JSON object) for a memnode event to an Input.
	Normalize(event string, payload []byte) (Input, error)
	// Format renders a Result as the single JSON object the agent expects on stdout.
	Format(event string, res Result) ([]byte, error)
	// LastAssistantMessage reads the text of the agent's last message from its transcript
	// (Input.TranscriptPath), for agents that do not pass it in the payload. The text is
	// raw: the caller cleans it.
	LastAssistantMessage(transcriptPath string) (string, error)
	// MCPTool is the name under which the agent shows the model one of memnode's MCP tools
	// (search, timeline, get_observations, …), for context that tells the model what to call.
	MCPTool(tool string) string
}

// Installer adds memnode's hooks and MCP server to an agent's configuration, and removes
// exactly those again.
type Installer interface {
	Install(install.Options) ([]install.Change, error)
	Uninstall(install.Options) ([]install.Change, error)
}

// Platform is one registered coding agent.
type Platform struct {
	// Name is the agent's name on the command line and in records (a contract: claude-code,
	// codex, gemini-cli, antigravity, opencode, copilot, qwen-code, cursor, windsurf, goose,
	// roo-code, warp).
	Name string
	// Display is the agent's name for people ("Claude Code").
	Display string
	// Adapter is nil for an MCP-only agent (goose, roo-code, warp): it has no hooks.
	Adapter   Adapter
	Installer Installer
	// ProjectDirEnv is the environment variable in which the agent tells its hooks the
	// project root ("" when it has none).
	ProjectDirEnv string
	// ContextFile is the agent's rules/context file, for agents that cannot take context
	// from a hook (or not in every build): the node rewrites it in each project the agent
	// works in after every session summary (package contextfile). Zero for none.
	ContextFile contextfile.Spec
	// Detect tells `memnode install` (no argument) that the agent is installed here.
	Detect Detect
	// Fixtures is the folder, relative to the repository root, of the agent's recorded
	// hook payloads (session.jsonl, README.md) that its tests replay.
	Fixtures string
	// History is where the agent keeps its past sessions, for `memnode import
	// --from-<Name>`; nil when memnode cannot import them.
	History *History
}

// Registry is the set of registered platforms, in registration order.
type Registry struct {
	list []Platform
}

// NewRegistry returns a registry of ps. Names must be unique; a duplicate panics, since
// it is a programming error in the registry's list.
func NewRegistry(ps ...Platform) *Registry {
	r := &Registry{}
	for _, p := range ps {
		if _, dup := r.Lookup(p.Name); dup {
			panic("platform: duplicate platform " + p.Name)
		}
		r.list = append(r.list, p)
	}
	return r
}

// Lookup returns the platform called name.
func (r *Registry) Lookup(name string) (Platform, bool) {
	i := slices.IndexFunc(r.list, func(p Platform) bool { return p.Name == name })
	if i < 0 {
		return Platform{}, false
	}
	return r.list[i], true
}

// Names lists the registered platforms' names, in registration order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.list))
	for i, p := range r.list {
		names[i] = p.Name
	}
	return names
}

// All returns the registered platforms, in registration order.
func (r *Registry) All() []Platform { return slices.Clone(r.list) }

package hooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/platform"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/privacy"
)

// handler does the work of one memnode event.
type handler func(ctx context.Context, h *hook, in *platform.Input) (platform.Result, error)

func handlerFor(event string) handler {
	switch event {
	case platform.EventContext:
		return handleContext
	case platform.EventSessionInit:
		return handleSessionInit
	case platform.EventFileContext:
		return handleFileContext
	case platform.EventObservation:
		return handleObservation
	case platform.EventSummarize:
		return handleSummarize
	case platform.EventSessionEnd:
		return handleSessionEnd
	}
	return nil
}

// maxContextBytes caps what SessionStart injects, whatever the node sends.
const maxContextBytes = 256 << 10

// handleContext records the session start (which also starts the node when needed) and
// injects the node's context block. No node, no context: the session starts anyway.
func handleContext(ctx context.Context, h *hook, in *platform.Input) (platform.Result, error) {
	project := h.project(in)
	if h.excluded(in, project) {
		return platform.Result{}, nil
	}
	ev := h.newEvent(memory.KindSessionStart, in, project)
	ev.Reason = in.Reason
	if err := h.send(ctx, ev); err != nil {
		h.logf("context hook: %v", err)
	}
	if h.nodeDown() {
		return platform.Result{}, nil // already failed once; do not spend the budget again
	}
	q := url.Values{"project": {project}, "format": {"json"}}
	if in.SessionID != "" {
		q.Set("session_id", in.SessionID)
	}
	body, err := h.call(ctx, http.MethodGet, "/api/context?"+q.Encode(), nil)
	if err != nil {
		return platform.Result{}, err
	}
	var ans apitype.Context
	if err := json.Unmarshal(body, &ans); err != nil {
		ans = apitype.Context{Text: string(body)} // a node from before format=json answers text
	}
	text := ans.Text
	if len(text) > maxContextBytes {
		text = text[:maxContextBytes]
	}
	return platform.Result{AdditionalContext: withToolNames(strings.TrimSpace(text), h.ad), SystemMessage: oneLine(ans.UserMessage)}, nil
}

// withToolNames names memnode's MCP tools as the agent shows them to the model (Claude Code
// 2.1.x defers MCP tools behind ToolSearch: the model must know the exact names to load),
// inside the context block.
func withToolNames(text string, ad platform.Adapter) string {
	if text == "" {
		return ""
	}
	line := fmt.Sprintf("memnode's MCP tools here are %s, %s and %s (load them first if they are deferred).",
		ad.MCPTool("search"), ad.MCPTool("timeline"), ad.MCPTool("get_observations"))
	end := "</" + privacy.ContextTag + ">"
	if i := strings.LastIndex(text, end); i >= 0 {
		return text[:i] + line + "\n" + text[i:]
	}
	return text + "\n" + line
}

// handleSessionInit records the user's prompt. Wholly private prompts are recorded as a
// marker only, so the node also skips the tool calls of that turn.
func handleSessionInit(ctx context.Context, h *hook, in *platform.Input) (platform.Result, error) {
	if in.Continuation {
		return platform.Result{}, nil // the prompt was recorded, and its context given, at its first call
	}
	if in.ProtocolOnly || (in.Prompt != "" && privacy.IsProtocolOnly(in.Prompt)) {
		return platform.Result{}, nil
	}
	project := h.project(in)
	if h.excluded(in, project) {
		return platform.Result{}, nil
	}
	ev := h.newEvent(memory.KindPrompt, in, project)
	switch {
	case strings.TrimSpace(in.Prompt) != "":
		ev.Prompt = in.Prompt
	case in.PromptHadText:
		ev.Private = true
	default:
		ev.Prompt = mediaPrompt
	}
	if err := h.send(ctx, ev); err != nil {
		return platform.Result{}, err
	}
	return semanticContext(ctx, h, ev.Prompt, project), nil
}

// handleObservation records one tool call and, when the call read files (in.FilePaths:
// Codex's shell, Copilot's view), answers with their file context, so one hook process
// does both for an agent whose file context comes after the read. A call that names no
// file makes no request beyond the observation; neither does one whose observation could
// not reach the node (it was spooled).
func handleObservation(ctx context.Context, h *hook, in *platform.Input) (platform.Result, error) {
	if err := recordObservation(ctx, h, in); err != nil {
		return platform.Result{}, err
	}
	if len(in.FilePaths) == 0 || h.nodeDown() {
		return platform.Result{}, nil
	}
	return handleFileContext(ctx, h, in)
}

// recordObservation sends one tool call to the node (or the spool).
func recordObservation(ctx context.Context, h *hook, in *platform.Input) error {
	if in.ToolName == "" || in.Bookkeeping || h.skipTool(in.ToolName) {
		return nil
	}
	project := h.project(in)
	if h.excluded(in, project) {
		return nil
	}
	ev := h.newEvent(memory.KindObservation, in, project)
	ev.ToolName = in.ToolName
	ev.ToolUseID = in.ToolUseID
	ev.ToolInput = in.ToolInput
	ev.ToolResponse = in.ToolResponse
	ev.AgentID = in.AgentID
	ev.AgentType = in.AgentType
	return h.send(ctx, ev)
}

// handleSummarize asks for the session summary at the end of a main-agent turn.
func handleSummarize(ctx context.Context, h *hook, in *platform.Input) (platform.Result, error) {
	if in.StopHookActive || in.AgentID != "" || in.SessionID == "" {
		return platform.Result{}, nil
	}
	project := h.project(in)
	if h.excluded(in, project) {
		return platform.Result{}, nil
	}
	if privateTurn(h.ad, in.TranscriptPath) {
		// The answer to a wholly private prompt repeats it: nothing of this turn is kept.
		return platform.Result{}, nil
	}
	recordFailedCalls(ctx, h, in)
	var msg string
	if in.LastAssistantMessage != nil {
		msg = *in.LastAssistantMessage // from the cleaned payload
	} else if in.TranscriptPath != "" {
		raw, err := h.ad.LastAssistantMessage(in.TranscriptPath)
		if err != nil {
			// Better one missing summary than a blocked Stop.
			return platform.Result{}, err
		}
		msg = privacy.Clean(raw)
	}
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return platform.Result{}, nil
	}
	ev := h.newEvent(memory.KindSummarize, in, project)
	ev.LastAssistantMessage = msg
	return platform.Result{}, h.send(ctx, ev)
}

// handleSessionEnd records the end of a session.
func handleSessionEnd(ctx context.Context, h *hook, in *platform.Input) (platform.Result, error) {
	project := h.project(in)
	if h.excluded(in, project) {
		return platform.Result{}, nil
	}
	ev := h.newEvent(memory.KindSessionEnd, in, project)
	ev.Reason = in.Reason
	return platform.Result{}, h.send(ctx, ev)
}

// failedCallReader is implemented by adapters whose agent fires no hook for a tool call
// that failed outright (Codex's failed apply_patch): at the turn's end they read those
// calls from the transcript.
type failedCallReader interface {
	FailedCalls(stop platform.Input) ([]platform.Input, error)
}

// recordFailedCalls records the turn's failed calls that no hook saw, cleaned as the hook
// cleans a payload. Best effort: the summary does not wait on them.
func recordFailedCalls(ctx context.Context, h *hook, in *platform.Input) {
	fr, ok := h.ad.(failedCallReader)
	if !ok {
		return
	}
	calls, err := fr.FailedCalls(*in)
	if err != nil {
		h.logf("failed calls: %v", err)
	}
	for _, c := range calls {
		parts, err := privacy.CleanJSONParts(c.ToolInput, c.ToolResponse)
		if err != nil {
			continue
		}
		c.ToolInput, c.ToolResponse = platform.NonNull(parts[0]), platform.NonNull(parts[1])
		if err := recordObservation(ctx, h, &c); err != nil {
			h.logf("failed call %s: %v", c.ToolUseID, err)
		}
	}
}

// promptReader is implemented by adapters that can read the user's last prompt from the
// agent's transcript.
type promptReader interface {
	LastUserPrompt(transcriptPath string) (string, error)
}

// privateTurn reports whether the turn that just ended answered a prompt that was wholly
// private (nothing left once memory tags are removed), as the transcript shows.
func privateTurn(ad platform.Adapter, transcript string) bool {
	pr, ok := ad.(promptReader)
	if transcript == "" || !ok {
		return false
	}
	prompt, err := pr.LastUserPrompt(transcript)
	if err != nil || strings.TrimSpace(prompt) == "" {
		return false
	}
	return privacy.IsEmptyAfterClean(prompt)
}

package codex

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/memnode/memnode/platform"
)

// rolloutLine is one record of a Codex rollout file.
type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type             string `json:"type"`
		LastAgentMessage string `json:"last_agent_message"`
		Role             string `json:"role"`
		Content          []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		// custom_tool_call (apply_patch) and custom_tool_call_output.
		CallID  string          `json:"call_id"`
		Name    string          `json:"name"`
		Input   json.RawMessage `json:"input"`
		Output  json.RawMessage `json:"output"`
		Message string          `json:"message"` // event_msg user_message (older Codex)
		Item    struct {
			Type     string          `json:"type"`
			ID       string          `json:"id"`
			ExitCode *int            `json:"exit_code"`
			Content  json.RawMessage `json:"content"`
		} `json:"item"`
	} `json:"payload"`
}

// maxRolloutLine bounds one rollout record (a record holds a whole model request's items).
const maxRolloutLine = 64 << 20

// scanRollout calls fn for each record of the rollout at path, until fn returns false.
func scanRollout(path string, fn func(rolloutLine) bool) error {
	f, err := platform.OpenTranscript(path)
	if err != nil {
		return fmt.Errorf("open codex rollout: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxRolloutLine)
	for sc.Scan() {
		var l rolloutLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue // a line being written, or a record of another shape
		}
		if !fn(l) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read codex rollout: %w", err)
	}
	return nil
}

// exitCode is the exit code the rollout records for the shell call id (its
// item_completed CommandExecution), when it is there yet.
func exitCode(path, id string) (int, bool) {
	if path == "" || id == "" {
		return 0, false
	}
	code, found := 0, false
	_ = scanRollout(path, func(l rolloutLine) bool {
		it := l.Payload.Item
		if l.Payload.Type == "item_completed" && it.Type == "CommandExecution" && it.ID == id && it.ExitCode != nil {
			code, found = *it.ExitCode, true
			return false
		}
		return true
	})
	return code, found
}

// LastAssistantMessage implements platform.Adapter: the last task_complete's
// last_agent_message, else the last assistant message of the rollout. (Codex's Stop
// payload carries last_assistant_message, so this is the fallback.)
func (Adapter) LastAssistantMessage(path string) (string, error) {
	var last string
	err := scanRollout(path, func(l rolloutLine) bool {
		switch {
		case l.Type == "event_msg" && l.Payload.Type == "task_complete" && l.Payload.LastAgentMessage != "":
			last = l.Payload.LastAgentMessage
		case l.Type == "response_item" && l.Payload.Type == "message" && l.Payload.Role == "assistant":
			var text string
			for _, c := range l.Payload.Content {
				if c.Type == "output_text" {
					text += c.Text
				}
			}
			if text != "" {
				last = text
			}
		}
		return true
	})
	return last, err
}

// LastUserPrompt returns the last prompt the user typed (the rollout's last UserMessage),
// so that the Stop hook can tell a wholly private turn. The text is raw: the caller cleans it.
func (Adapter) LastUserPrompt(path string) (string, error) {
	var last string
	err := scanRollout(path, func(l rolloutLine) bool {
		if l.Type != "event_msg" {
			return true
		}
		switch {
		case l.Payload.Type == "item_completed" && l.Payload.Item.Type == "UserMessage":
			if t := itemText(l.Payload.Item.Content); strings.TrimSpace(t) != "" {
				last = t
			}
		case l.Payload.Type == "user_message" && strings.TrimSpace(l.Payload.Message) != "":
			last = l.Payload.Message
		}
		return true
	})
	return last, err
}

// FailedCalls returns the tool calls of the rollout's last turn (after its last user
// message) that failed outright: Codex fires no PostToolUse for them, so the Stop hook
// records them from here. Seen with codex 0.171.0: an apply_patch whose context does not
// match ("apply_patch verification failed: …"); a successful one answers "Exit code: 0 …".
// Each is the canonical call, as the observation hook would have had it, with the failure
// as its response. The texts are raw: the caller cleans them.
func (Adapter) FailedCalls(stop platform.Input) ([]platform.Input, error) {
	if stop.TranscriptPath == "" {
		return nil, nil
	}
	patches := map[string]string{} // call_id → patch text, this turn
	var failed []platform.Input
	err := scanRollout(stop.TranscriptPath, func(l rolloutLine) bool {
		if l.Type != "response_item" {
			return true
		}
		p := l.Payload
		switch {
		case p.Type == "message" && p.Role == "user":
			clear(patches)
			failed = failed[:0]
		case p.Type == "custom_tool_call" && p.Name == "apply_patch":
			var patch string
			if json.Unmarshal(p.Input, &patch) == nil {
				patches[p.CallID] = patch
			}
		case p.Type == "custom_tool_call_output":
			patch, ok := patches[p.CallID]
			var out string
			if !ok || json.Unmarshal(p.Output, &out) != nil || strings.HasPrefix(out, "Exit code: 0") {
				return true
			}
			in := platform.Input{SessionID: stop.SessionID, Cwd: stop.Cwd, TranscriptPath: stop.TranscriptPath,
				HookEventName: "Stop", ToolName: "apply_patch", ToolUseID: p.CallID}
			if name, input, ok := patchCall(patch, stop.Cwd); ok {
				in.ToolName, in.ToolInput = name, input
			} else {
				in.ToolInput = mustJSON(map[string]string{"command": patch})
			}
			in.ToolResponse = failure(out)
			failed = append(failed, in)
		}
		return true
	})
	return failed, err
}

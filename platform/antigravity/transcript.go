package antigravity

import (
	"encoding/json"
	"strings"

	"github.com/memnode/memnode/platform/geminicli"
)

// step is one line of Antigravity's transcript (…/brain/<conversation>/.system_generated/
// logs/transcript*.jsonl): a user input, a model response (text and tool calls) or a tool
// step.
type step struct {
	Index     *int              `json:"step_index"`
	Source    string            `json:"source"` // USER_EXPLICIT, MODEL, SYSTEM
	Type      string            `json:"type"`   // USER_INPUT, PLANNER_RESPONSE, RUN_COMMAND, …
	Content   string            `json:"content"`
	ToolCalls []json.RawMessage `json:"tool_calls"`
}

// LastAssistantMessage implements platform.Adapter: the text of the model's last response
// after the last user input. Antigravity may write the transcript only after Stop: then
// there is none yet, and that turn has no summary. The text is raw: the caller cleans it.
func (Adapter) LastAssistantMessage(path string) (string, error) {
	return geminicli.ScanTranscript(path, func(line []byte) (string, bool) {
		var s step
		if json.Unmarshal(line, &s) != nil {
			return "", false
		}
		switch {
		case s.Type == "USER_INPUT":
			return "", true // an answer must come after the last prompt
		case s.Source == "MODEL" && s.Type == "PLANNER_RESPONSE" && strings.TrimSpace(s.Content) != "":
			return strings.TrimSpace(s.Content), true
		}
		return "", false
	})
}

// LastUserPrompt returns the user's last prompt (the <USER_REQUEST> of the last user input,
// without the metadata Antigravity appends), so that the summary hook can tell a wholly
// private turn. The text is raw: the caller cleans it.
func (Adapter) LastUserPrompt(path string) (string, error) {
	prompt, _, err := lastUserPrompt(path)
	return prompt, err
}

// lastUserPrompt returns the last user input's request and its step index (-1 when the line
// has none).
func lastUserPrompt(path string) (string, int, error) {
	if path == "" {
		return "", -1, nil
	}
	index := -1
	prompt, err := geminicli.ScanTranscript(path, func(line []byte) (string, bool) {
		var s step
		if json.Unmarshal(line, &s) != nil || s.Type != "USER_INPUT" {
			return "", false
		}
		index = -1
		if s.Index != nil {
			index = *s.Index
		}
		return userRequest(s.Content), true
	})
	return prompt, index, err
}

// userRequest is the text inside <USER_REQUEST>…</USER_REQUEST>, or the whole content when
// it has no such block.
func userRequest(content string) string {
	_, rest, ok := strings.Cut(content, "<USER_REQUEST>")
	if !ok {
		return strings.TrimSpace(content)
	}
	req, _, _ := strings.Cut(rest, "</USER_REQUEST>")
	return strings.TrimSpace(req)
}

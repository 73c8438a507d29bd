package copilot

import (
	"bufio"
	"encoding/json"
	"fmt"

	"github.com/memnode/memnode/platform"
)

// maxEventLine bounds one record of Copilot's events.jsonl.
const maxEventLine = 64 << 20

// LastAssistantMessage implements platform.Adapter: the content of the last
// assistant.message in the session's events.jsonl (agentStop carries no text).
func (Adapter) LastAssistantMessage(path string) (string, error) {
	f, err := platform.OpenTranscript(path)
	if err != nil {
		return "", fmt.Errorf("open copilot events: %w", err)
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxEventLine)
	for sc.Scan() {
		var ev struct {
			Type string `json:"type"`
			Data struct {
				Content string `json:"content"`
			} `json:"data"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "assistant.message" && ev.Data.Content != "" {
			last = ev.Data.Content
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read copilot events: %w", err)
	}
	return last, nil
}

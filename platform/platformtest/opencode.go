package platformtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
)

// OpenCodePluginEvent is what OpenCode's plugin.js (platform/opencode) does with a
// recorded hook call: the memnode event it runs and the payload it sends ("" when it sends
// nothing). The opencode tests and the offline compressor's golden corpus replay with it.
func OpenCodePluginEvent(tb testing.TB, c Call) (string, []byte) {
	tb.Helper()
	var p map[string]any
	if err := json.Unmarshal(c.Payload, &p); err != nil {
		tb.Fatal(err)
	}
	p["cwd"] = "/home/dev/demo-app"
	event := ""
	switch c.Event {
	case "experimental.chat.system.transform":
		head, _ := p["output"].(map[string]any)["system_head"].([]any)
		if len(head) > 0 && strings.HasPrefix(head[0].(string), "You are a title generator") {
			return "", nil
		}
		event = platform.EventContext
	case "chat.message":
		event = platform.EventSessionInit
	case "tool.execute.before":
		if p["input"].(map[string]any)["tool"] != "read" {
			return "", nil
		}
		event = platform.EventFileContext
	case "tool.execute.after":
		event = platform.EventObservation
	case "event":
		ev := p["event"].(map[string]any)
		switch ev["type"] {
		case "message.part.updated":
			part, _ := ev["properties"].(map[string]any)["part"].(map[string]any)
			if part["type"] != "tool" || part["state"].(map[string]any)["status"] != "error" {
				return "", nil
			}
			event = platform.EventObservation
		case "session.idle":
			event = platform.EventSummarize
			p["last_assistant_message"] = "Fixed the typo."
		default:
			return "", nil
		}
	default:
		return "", nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		tb.Fatal(err)
	}
	return event, b
}

package agentcli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
)

// AnthropicMessages is the Anthropic Messages API (POST /v1/messages), as Claude Code
// speaks it: streaming SSE (message_start, content_block_*, message_delta, message_stop)
// or, for "stream": false, one JSON message. Point Claude Code at it with
// ANTHROPIC_BASE_URL=<Server.URL>.
type AnthropicMessages struct {
	n atomic.Int64
}

var _ Wire = (*AnthropicMessages)(nil)

// Serves implements Wire.
func (*AnthropicMessages) Serves(method, path string) bool {
	return method == http.MethodPost && path == "/v1/messages"
}

// Tools implements Wire.
func (*AnthropicMessages) Tools(body []byte) []string { return toolNames(body) }

// Reply implements Wire.
func (a *AnthropicMessages) Reply(w http.ResponseWriter, body []byte, turn Turn) error {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	id := fmt.Sprintf("msg_fake%04d", a.n.Add(1))
	var content []map[string]any
	if turn.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": turn.Text})
	}
	for _, c := range turn.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(argsJSON(c))})
	}
	stop := "end_turn"
	if len(turn.Calls) > 0 {
		stop = "tool_use"
	}
	in, out := 10, 10
	if turn.InputTokens > 0 || turn.OutputTokens > 0 {
		in, out = turn.InputTokens, turn.OutputTokens
	}
	usage := map[string]any{"input_tokens": in, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !streamed(body) {
		return writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": req.Model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
	}
	s := newSSE(w)
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": req.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage,
	}})
	for i, block := range content {
		switch block["type"] {
		case "text":
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
		case "tool_use":
			s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{
				"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{},
			}})
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{
				"type": "input_json_delta", "partial_json": string(block["input"].(json.RawMessage)),
			}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
	return s.err
}

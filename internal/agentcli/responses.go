package agentcli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
)

// OpenAIResponses is the OpenAI Responses API (POST /v1/responses) as Codex CLI streams it:
// SSE response.created, response.output_item.added/done per item (message, function_call
// with its namespace, custom_tool_call for a Call with Input, tool_search_call for a Call
// named tool_search: Codex's client-side search of deferred tools, Args {query, limit}),
// response.completed. Point Codex at it with a
// custom model provider: base_url = "<Server.URL>/v1", wire_api = "responses".
type OpenAIResponses struct {
	n atomic.Int64
}

var _ Wire = (*OpenAIResponses)(nil)

// Serves implements Wire.
func (*OpenAIResponses) Serves(method, path string) bool {
	return method == http.MethodPost && strings.HasSuffix(path, "/responses")
}

// Tools implements Wire: function tools by name, namespaces as <namespace>__<tool>, hosted
// and custom tools by name or type.
func (*OpenAIResponses) Tools(body []byte) []string { return toolNames(body) }

// Reply implements Wire.
func (o *OpenAIResponses) Reply(w http.ResponseWriter, _ []byte, turn Turn) error {
	n := o.n.Add(1)
	respID := fmt.Sprintf("resp_fake%04d", n)
	var items []map[string]any
	if turn.Text != "" {
		items = append(items, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_fake%04d", n), "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": turn.Text, "annotations": []any{}}},
		})
	}
	for i, c := range turn.Calls {
		id := fmt.Sprintf("fc_fake%04d_%d", n, i)
		if c.Name == "tool_search" {
			items = append(items, map[string]any{"type": "tool_search_call", "id": id, "call_id": c.ID, "status": "completed", "execution": "client", "arguments": json.RawMessage(argsJSON(c))})
			continue
		}
		if c.Input != "" {
			items = append(items, map[string]any{"type": "custom_tool_call", "id": id, "call_id": c.ID, "name": c.Name, "input": c.Input, "status": "completed"})
			continue
		}
		fc := map[string]any{"type": "function_call", "id": id, "call_id": c.ID, "name": c.Name, "arguments": argsJSON(c), "status": "completed"}
		if c.Namespace != "" {
			fc["namespace"] = c.Namespace
		}
		items = append(items, fc)
	}
	s := newSSE(w)
	seq := 0
	next := func() int { seq++; return seq }
	s.event("response.created", map[string]any{"type": "response.created", "sequence_number": next(), "response": map[string]any{"id": respID, "object": "response", "status": "in_progress", "output": []any{}}})
	for i, it := range items {
		s.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "sequence_number": next(), "output_index": i, "item": it})
		if it["type"] == "message" {
			s.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta", "sequence_number": next(), "output_index": i, "item_id": it["id"], "content_index": 0, "delta": turn.Text})
		}
		s.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "sequence_number": next(), "output_index": i, "item": it})
	}
	s.event("response.completed", map[string]any{"type": "response.completed", "sequence_number": next(), "response": map[string]any{
		"id": respID, "object": "response", "status": "completed", "output": items,
		"usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 20},
	}})
	return s.err
}

package agentcli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// OpenAIChat is the OpenAI Chat Completions API (POST …/chat/completions), streaming SSE
// chunks ending in "data: [DONE]" or, for "stream": false, one chat.completion object: the
// wire of OpenAI-compatible providers (Copilot CLI's COPILOT_PROVIDER_BASE_URL, and others).
type OpenAIChat struct {
	n atomic.Int64
}

var _ Wire = (*OpenAIChat)(nil)

// Serves implements Wire.
func (*OpenAIChat) Serves(method, path string) bool {
	return method == http.MethodPost && strings.HasSuffix(path, "/chat/completions")
}

// Tools implements Wire.
func (*OpenAIChat) Tools(body []byte) []string { return toolNames(body) }

// Reply implements Wire.
func (o *OpenAIChat) Reply(w http.ResponseWriter, body []byte, turn Turn) error {
	var req struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &req)
	id := fmt.Sprintf("chatcmpl-fake%04d", o.n.Add(1))
	created := time.Now().Unix()
	var calls []map[string]any
	for i, c := range turn.Calls {
		calls = append(calls, map[string]any{"index": i, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": argsJSON(c)}})
	}
	finish := "stop"
	if len(calls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
	if !streamed(body) {
		msg := map[string]any{"role": "assistant", "content": turn.Text}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		return writeJSON(w, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage,
		})
	}
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	if turn.Text != "" {
		s.event("", chunk(map[string]any{"content": turn.Text}, nil))
	}
	if len(calls) > 0 {
		s.event("", chunk(map[string]any{"tool_calls": calls}, nil))
	}
	last := chunk(map[string]any{}, finish)
	last["usage"] = usage
	s.event("", last)
	s.event("", "[DONE]")
	return s.err
}

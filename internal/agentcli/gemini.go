package agentcli

import (
	"encoding/json"
	"net/http"
	"strings"
)

// GeminiAPI is the Gemini API (generativelanguage v1beta) as Gemini CLI speaks it:
// POST …/models/<model>:streamGenerateContent?alt=sse (SSE, one GenerateContentResponse per
// event) and …:generateContent (one JSON response); tools arrive as
// tools[].functionDeclarations. Point Gemini CLI at it with GOOGLE_GEMINI_BASE_URL=<Server.URL>,
// GEMINI_API_KEY and security.auth.selectedType "gemini-api-key" in its settings.
type GeminiAPI struct{}

var _ Wire = GeminiAPI{}

// Serves implements Wire.
func (GeminiAPI) Serves(method, path string) bool {
	return method == http.MethodPost && strings.Contains(path, "/models/") &&
		(strings.HasSuffix(path, ":streamGenerateContent") || strings.HasSuffix(path, ":generateContent"))
}

// Tools implements Wire.
func (GeminiAPI) Tools(body []byte) []string {
	var req struct {
		Tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []string
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			out = append(out, f.Name)
		}
	}
	return out
}

// Reply implements Wire. The streamed form is chosen by the request's path, which the
// server does not pass: a body is streamed unless it is a generateContent call, which
// Gemini CLI makes only for side requests (routing, next-speaker checks) with a
// responseMimeType — those get the text as the whole answer.
func (GeminiAPI) Reply(w http.ResponseWriter, body []byte, turn Turn) error {
	var parts []map[string]any
	if turn.Text != "" || len(turn.Calls) == 0 {
		parts = append(parts, map[string]any{"text": turn.Text})
	}
	for _, c := range turn.Calls {
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": json.RawMessage(argsJSON(c))}})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
		"modelVersion":  "gemini-2.5-flash",
	}
	if !geminiStreamed(body) {
		return writeJSON(w, resp)
	}
	s := newSSE(w)
	s.event("", resp)
	return s.err
}

// geminiStreamed tells a streamGenerateContent body from a generateContent one: Gemini CLI
// asks for JSON output (responseMimeType) only on its non-streamed side requests.
func geminiStreamed(body []byte) bool {
	var req struct {
		GenerationConfig struct {
			ResponseMimeType string `json:"responseMimeType"`
		} `json:"generationConfig"`
	}
	_ = json.Unmarshal(body, &req)
	return req.GenerationConfig.ResponseMimeType == ""
}

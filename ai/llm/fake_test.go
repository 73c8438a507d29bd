package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
)

// fakeReply is one scripted answer of a fake provider.
type fakeReply struct {
	status  int
	headers map[string]string
	body    string // raw body; empty with status 200 means a well-formed answer carrying text
	text    string
	in, out int
	block   bool // hold the request until the client gives up
}

type recordedRequest struct {
	Path   string
	Header http.Header
	Query  string
	Body   map[string]any
	Raw    string
}

// fakeAPI is a provider server on 127.0.0.1 speaking one vendor's real wire format: it checks
// the path, the auth headers and the request shape, and answers with the vendor's JSON.
type fakeAPI struct {
	tb    testing.TB
	kind  string
	key   string
	model string
	srv   *httptest.Server

	mu       sync.Mutex
	replies  []fakeReply // consumed in order; the last one repeats
	requests []recordedRequest
}

func newFakeAPI(tb testing.TB, kind, key string, replies ...fakeReply) *fakeAPI {
	tb.Helper()
	f := &fakeAPI{tb: tb, kind: kind, key: key, model: kind + "-test-model", replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) script(replies ...fakeReply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replies = replies
}

func (f *fakeAPI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeAPI) request(i int) recordedRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

func (f *fakeAPI) next() fakeReply {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.replies) == 0 {
		return fakeReply{status: 200, text: "", in: 1, out: 1}
	}
	r := f.replies[0]
	if len(f.replies) > 1 {
		f.replies = f.replies[1:]
	}
	return r
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := recordedRequest{Path: r.URL.Path, Header: r.Header.Clone(), Query: r.URL.RawQuery, Raw: string(raw)}
	_ = json.Unmarshal(raw, &rec.Body)
	f.mu.Lock()
	f.requests = append(f.requests, rec)
	f.mu.Unlock()

	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad method or content type", http.StatusBadRequest)
		return
	}
	if msg := f.checkShape(r, rec.Body); msg != "" {
		f.writeError(w, http.StatusBadRequest, msg)
		return
	}
	if !f.authorized(r) {
		// Real vendors sometimes echo (part of) the key back; this fake echoes all of it.
		f.writeError(w, http.StatusUnauthorized, "invalid api key: "+r.Header.Get("x-api-key")+r.Header.Get("Authorization")+r.Header.Get("x-goog-api-key"))
		return
	}
	rep := f.next()
	if rep.block {
		<-r.Context().Done()
		return
	}
	for k, v := range rep.headers {
		w.Header().Set(k, v)
	}
	if rep.status == 0 {
		rep.status = 200
	}
	if rep.body != "" || rep.status != 200 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(f.success(rep))
}

func (f *fakeAPI) checkShape(r *http.Request, b map[string]any) string {
	switch f.kind {
	case "anthropic":
		if r.URL.Path != "/v1/messages" {
			return "path " + r.URL.Path
		}
		if r.Header.Get("anthropic-version") != AnthropicVersion {
			return "missing anthropic-version"
		}
		msgs, _ := b["messages"].([]any)
		if b["model"] != f.model || b["max_tokens"] == nil || len(msgs) != 1 || msgs[0].(map[string]any)["role"] != "user" {
			return "bad messages request"
		}
	case "openai":
		if r.URL.Path != "/v1/chat/completions" {
			return "path " + r.URL.Path
		}
		msgs, _ := b["messages"].([]any)
		if b["model"] != f.model || len(msgs) == 0 || msgs[len(msgs)-1].(map[string]any)["role"] != "user" {
			return "bad chat request"
		}
	case "gemini":
		if r.URL.Path != "/v1beta/models/"+f.model+":generateContent" {
			return "path " + r.URL.Path
		}
		cs, _ := b["contents"].([]any)
		if len(cs) != 1 {
			return "bad contents"
		}
		parts, _ := cs[0].(map[string]any)["parts"].([]any)
		if len(parts) == 0 || parts[0].(map[string]any)["text"] == "" {
			return "bad parts"
		}
	}
	return ""
}

func (f *fakeAPI) setKey(k string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key = k
}

func (f *fakeAPI) authorized(r *http.Request) bool {
	f.mu.Lock()
	key := f.key
	f.mu.Unlock()
	switch f.kind {
	case "anthropic":
		return r.Header.Get("x-api-key") == key
	case "openai":
		return r.Header.Get("Authorization") == "Bearer "+key
	case "gemini":
		return r.Header.Get("x-goog-api-key") == key || r.URL.Query().Get("key") == key
	}
	return false
}

func (f *fakeAPI) writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var v any
	switch f.kind {
	case "anthropic":
		v = map[string]any{"type": "error", "error": map[string]any{"type": "authentication_error", "message": msg}}
	case "openai":
		v = map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": "invalid_api_key"}}
	default:
		v = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "UNAUTHENTICATED"}}
	}
	json.NewEncoder(w).Encode(v)
}

func (f *fakeAPI) success(r fakeReply) any {
	switch f.kind {
	case "anthropic":
		return map[string]any{
			"id": "msg_01", "type": "message", "role": "assistant", "model": f.model,
			"content":     []any{map[string]any{"type": "text", "text": r.text}},
			"stop_reason": "end_turn",
			"usage":       map[string]any{"input_tokens": r.in, "output_tokens": r.out},
		}
	case "openai":
		return map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": f.model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": r.text}}},
			"usage": map[string]any{"prompt_tokens": r.in, "completion_tokens": r.out, "total_tokens": r.in + r.out},
		}
	default:
		return map[string]any{
			"candidates": []any{map[string]any{"finishReason": "STOP",
				"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": r.text}}}}},
			"usageMetadata": map[string]any{"promptTokenCount": r.in, "candidatesTokenCount": r.out, "totalTokenCount": r.in + r.out},
			"modelVersion":  f.model,
		}
	}
}

// provider returns the real client for this fake.
func (f *fakeAPI) provider(timeout time.Duration) Provider {
	cfg := ProviderConfig{BaseURL: f.srv.URL, Model: f.model, APIKey: f.key, Timeout: timeout, MaxOutputTokens: 256}
	switch f.kind {
	case "anthropic":
		return NewAnthropic(cfg)
	case "openai":
		cfg.BaseURL += "/v1"
		return NewOpenAI(cfg)
	default:
		return NewGemini(cfg)
	}
}

// vendor error bodies as the real APIs send them.
func rateLimitBody(kind string) string {
	switch kind {
	case "anthropic":
		return `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`
	case "openai":
		return `{"error":{"message":"Rate limit reached for gpt-4o-mini on requests per min (RPM): Limit 3.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	}
	return `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota) per minute.","status":"RESOURCE_EXHAUSTED"}}`
}

func quotaBody(kind string) (int, string) {
	switch kind {
	case "anthropic":
		return 400, `{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`
	case "openai":
		return 429, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	}
	// Gemini's quirk: a 500 whose body says quota exceeded.
	return 500, `{"error":{"code":500,"message":"Quota exceeded for quota metric 'Generate Content API requests per day'","status":"INTERNAL"}}`
}

func serverErrorBody(kind string) (int, string) {
	if kind == "anthropic" {
		return 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	}
	return 503, `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`
}

const goodObservation = `Here is what I saw:
<observation>
  <type>bugfix</type>
  <title>Fix nil map write in budget store</title>
  <subtitle>FileBudgetStore.Add wrote to a nil map</subtitle>
  <facts><fact>Add now loads before writing</fact><fact>file is rewritten atomically</fact></facts>
  <narrative>The budget store panicked on first use.</narrative>
  <concepts><concept>budget</concept></concepts>
  <files_read><file>ai/llm/budget.go</file></files_read>
  <files_modified><file>ai/llm/budget.go</file></files_modified>
</observation>`

const goodSummary = `<summary><request>add providers</request><investigated>wire formats</investigated><learned>Gemini reports quota as 500</learned><completed>three clients</completed><next_steps>wire into node</next_steps><notes>none</notes></summary>`

func toolCalls(n int, session string) []ai.ToolCall {
	out := make([]ai.ToolCall, n)
	for i := range out {
		out[i] = ai.ToolCall{
			SessionID: session, Project: "memnode", Cwd: "/work/main", ToolName: "Edit",
			ToolInput:    json.RawMessage(fmt.Sprintf(`{"file_path":"ai/llm/f%d.go","old_string":"a","new_string":"b"}`, i)),
			ToolResponse: json.RawMessage(`"ok"`),
			Prompt:       "make the budget store safe",
			At:           time.Date(2026, 11, 30, 12, 0, i, 0, time.UTC),
		}
	}
	return out
}

// sleepRecorder replaces real waiting: it records each requested delay and returns at once.
type sleepRecorder struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleepRecorder) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delays...)
}

func newTestCompressor(tb testing.TB, p Provider, sl *sleepRecorder, mut ...func(*CompressorConfig)) *Compressor {
	tb.Helper()
	cfg := CompressorConfig{Provider: p, MaxOutputTokens: 256, Sleep: sl.Sleep, Jitter: func(n time.Duration) time.Duration { return n / 2 }}
	for _, m := range mut {
		m(&cfg)
	}
	c, err := NewCompressor(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// fakeOffline stands in for the offline compressor: one observation per call, no tokens.
type fakeOffline struct {
	mu    sync.Mutex
	calls int
}

var _ ai.Compressor = (*fakeOffline)(nil)

func (f *fakeOffline) Name() string { return "offline" }

func (f *fakeOffline) Observe(_ context.Context, calls []ai.ToolCall) ([]ai.Observation, ai.Usage, error) {
	f.mu.Lock()
	f.calls += len(calls)
	f.mu.Unlock()
	out := make([]ai.Observation, len(calls))
	for i, c := range calls {
		out[i] = ai.Observation{Type: memory.TypeChange, Title: "offline: " + c.ToolName}
	}
	return out, ai.Usage{Model: "offline"}, nil
}

func (f *fakeOffline) Summarize(_ context.Context, in ai.SessionInput) (ai.Summary, ai.Usage, error) {
	return ai.Summary{Request: strings.TrimSpace(in.Request), Notes: "offline"}, ai.Usage{Model: "offline"}, nil
}

func (f *fakeOffline) handled() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

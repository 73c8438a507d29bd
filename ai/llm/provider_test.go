package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

var kinds = []string{"anthropic", "openai", "gemini"}

func TestProvidersSpeakTheWireFormat(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			f := newFakeAPI(t, kind, "sk-test-"+kind, fakeReply{text: "hello", in: 120, out: 34})
			p := f.provider(5 * time.Second)
			resp, err := p.Complete(context.Background(), Request{System: "be brief", Prompt: "hi", MaxOutputTokens: 99})
			if err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if resp.Text != "hello" || resp.InputTokens != 120 || resp.OutputTokens != 34 || resp.Model != f.model {
				t.Fatalf("response = %+v", resp)
			}
			req := f.request(0)
			switch kind {
			case "anthropic":
				if req.Header.Get("x-api-key") != f.key || req.Header.Get("anthropic-version") != "2023-06-01" {
					t.Fatalf("auth headers: %v", req.Header)
				}
				if req.Body["system"] != "be brief" || req.Body["max_tokens"] != float64(99) {
					t.Fatalf("body: %s", req.Raw)
				}
			case "openai":
				if req.Header.Get("Authorization") != "Bearer "+f.key {
					t.Fatalf("auth header: %v", req.Header)
				}
				msgs := req.Body["messages"].([]any)
				if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" || req.Body["max_tokens"] != float64(99) {
					t.Fatalf("body: %s", req.Raw)
				}
			case "gemini":
				if req.Header.Get("x-goog-api-key") != f.key || strings.Contains(req.Query, "key=") {
					t.Fatalf("key must be in the header only: %v %q", req.Header, req.Query)
				}
				gc := req.Body["generationConfig"].(map[string]any)
				si := req.Body["systemInstruction"].(map[string]any)
				if gc["maxOutputTokens"] != float64(99) || si["parts"].([]any)[0].(map[string]any)["text"] != "be brief" {
					t.Fatalf("body: %s", req.Raw)
				}
			}
		})
	}
}

func TestProvidersClassifyFailures(t *testing.T) {
	for _, kind := range kinds {
		qStatus, qBody := quotaBody(kind)
		sStatus, sBody := serverErrorBody(kind)
		cases := []struct {
			name       string
			reply      fakeReply
			wrongKey   bool
			timeout    time.Duration
			class      Class
			retryAfter time.Duration
		}{
			{"429 retry-after", fakeReply{status: 429, headers: map[string]string{"Retry-After": "7"}, body: rateLimitBody(kind)}, false, 0, RateLimit, 7 * time.Second},
			{"5xx", fakeReply{status: sStatus, body: sBody}, false, 0, Transient, 0},
			{"quota exceeded", fakeReply{status: qStatus, body: qBody}, false, 0, QuotaExhausted, 0},
			{"401", fakeReply{}, true, 0, AuthInvalid, 0},
			{"slow", fakeReply{block: true}, false, 50 * time.Millisecond, Transient, 0},
			{"garbage 200", fakeReply{status: 200, body: "<html>proxy error</html>"}, false, 0, Transient, 0},
			{"404 model", fakeReply{status: 404, body: `{"error":{"message":"model not found"}}`}, false, 0, Unrecoverable, 0},
		}
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				f := newFakeAPI(t, kind, "sk-right", tc.reply)
				timeout := tc.timeout
				if timeout == 0 {
					timeout = 5 * time.Second
				}
				p := f.provider(timeout)
				if tc.wrongKey {
					f.setKey("sk-other") // the server now expects another key
				}
				_, err := p.Complete(context.Background(), Request{Prompt: "x"})
				var pe *Error
				if !errors.As(err, &pe) {
					t.Fatalf("err = %v, want *Error", err)
				}
				if pe.Class != tc.class || pe.RetryAfter != tc.retryAfter {
					t.Fatalf("class %s retry-after %v, want %s %v (%v)", pe.Class, pe.RetryAfter, tc.class, tc.retryAfter, err)
				}
				if strings.Contains(err.Error(), "sk-right") {
					t.Fatalf("error leaks the key: %v", err)
				}
			})
		}
	}
}

func TestProviderHonoursCallerContext(t *testing.T) {
	f := newFakeAPI(t, "openai", "k", fakeReply{block: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.provider(time.Minute).Complete(ctx, Request{Prompt: "x"})
		done <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for f.count() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // polling for the request to arrive, not synchronising
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestClassifyTable(t *testing.T) {
	h := http.Header{}
	cases := []struct {
		status int
		body   string
		want   Class
	}{
		{401, `{}`, AuthInvalid},
		{403, `{"error":{"message":"permission denied"}}`, AuthInvalid},
		{400, `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}`, AuthInvalid},
		{402, `{"error":{"message":"Insufficient credits"}}`, QuotaExhausted},
		{429, `{"error":{"message":"You exceeded your current quota"}}`, QuotaExhausted},
		{429, `{"error":{"message":"Quota exceeded for metric: requests per minute"}}`, RateLimit},
		{429, `{}`, RateLimit},
		{500, `quota exceeded`, QuotaExhausted},
		{502, ``, Transient},
		{529, `{"type":"error","error":{"type":"overloaded_error"}}`, Transient},
		{408, ``, Transient},
		{413, `{"error":{"message":"request too large"}}`, Unrecoverable},
		{400, `{"error":{"message":"prompt is too long: 250000 tokens > 200000 maximum"}}`, Unrecoverable},
	}
	for _, c := range cases {
		if got := Classify("p", c.status, h, []byte(c.body)).Class; got != c.want {
			t.Errorf("Classify(%d, %q) = %s, want %s", c.status, c.body, got, c.want)
		}
	}
}

func TestRetryAfterForms(t *testing.T) {
	h := http.Header{}
	h.Set("Retry-After-Ms", "1500")
	if d := retryAfter(h, nil); d != 1500*time.Millisecond {
		t.Fatalf("retry-after-ms: %v", d)
	}
	h = http.Header{}
	h.Set("Retry-After", time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat))
	if d := retryAfter(h, nil); d < 80*time.Second || d > 91*time.Second {
		t.Fatalf("http-date: %v", d)
	}
	body := []byte(`{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"20s"}]}}`)
	if d := retryAfter(http.Header{}, body); d != 20*time.Second {
		t.Fatalf("gemini retryDelay: %v", d)
	}
}

func TestNewProviderKinds(t *testing.T) {
	for _, k := range kinds {
		p, err := NewProvider(k, ProviderConfig{Model: "m"})
		if err != nil || p.Name() != k || p.Model() != "m" {
			t.Fatalf("%s: %v %v", k, p, err)
		}
	}
	if _, err := NewProvider("mistral", ProviderConfig{}); !errors.Is(err, ErrUnknownKind) {
		t.Fatal(err)
	}
}

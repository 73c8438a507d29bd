package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
)

func TestCompressorRetriesHonouringRetryAfter(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			sStatus, sBody := serverErrorBody(kind)
			f := newFakeAPI(t, kind, "k",
				fakeReply{status: 429, headers: map[string]string{"Retry-After": "3"}, body: rateLimitBody(kind)},
				fakeReply{status: sStatus, body: sBody},
				fakeReply{text: goodObservation, in: 500, out: 80},
			)
			sl := &sleepRecorder{}
			c := newTestCompressor(t, f.provider(5*time.Second), sl)
			obs, u, err := c.Observe(context.Background(), toolCalls(2, "s1"))
			if err != nil {
				t.Fatalf("Observe: %v", err)
			}
			if len(obs) != 1 || obs[0].Type != memory.TypeBugfix {
				t.Fatalf("obs = %+v", obs)
			}
			if u.InputTokens != 500 || u.OutputTokens != 80 || u.Model != f.model {
				t.Fatalf("usage = %+v", u)
			}
			if f.count() != 3 {
				t.Fatalf("requests = %d, want 3", f.count())
			}
			d := sl.got()
			if len(d) != 2 {
				t.Fatalf("delays = %v", d)
			}
			// Retry-After 3s plus jitter, then exponential backoff step 2 (1s + 50% jitter).
			if d[0] < 3*time.Second || d[0] >= 3*time.Second+DefaultBaseDelay {
				t.Fatalf("first delay %v does not honour Retry-After 3s", d[0])
			}
			if d[1] != 1250*time.Millisecond { // 1s + Jitter(0.5s), and the test Jitter returns half its range
				t.Fatalf("second delay %v, want 1.25s", d[1])
			}
			s := c.Stats()
			if s.Calls != 3 || s.Errors[RateLimit] != 1 || s.Errors[Transient] != 1 || s.InputTokens != 500 {
				t.Fatalf("stats = %+v", s)
			}
		})
	}
}

func TestCompressorStopsOnNonRetryable(t *testing.T) {
	for _, kind := range kinds {
		qStatus, qBody := quotaBody(kind)
		for name, rep := range map[string]fakeReply{
			"quota":   {status: qStatus, body: qBody},
			"garbage": {text: "I could not find anything interesting, sorry!"},
		} {
			t.Run(kind+"/"+name, func(t *testing.T) {
				f := newFakeAPI(t, kind, "k", rep)
				sl := &sleepRecorder{}
				c := newTestCompressor(t, f.provider(5*time.Second), sl)
				_, _, err := c.Observe(context.Background(), toolCalls(1, "s"))
				if err == nil || f.count() != 1 || len(sl.got()) != 0 {
					t.Fatalf("err %v after %d requests, %d sleeps; want one request, no retry", err, f.count(), len(sl.got()))
				}
				want := map[string]Class{"quota": QuotaExhausted, "garbage": Unrecoverable}[name]
				if ClassOf(err) != want {
					t.Fatalf("class %s, want %s", ClassOf(err), want)
				}
				if name == "garbage" && !errors.Is(err, ErrBadOutput) {
					t.Fatalf("garbage should be ErrBadOutput: %v", err)
				}
			})
		}
	}
}

func TestCompressorBoundedAttemptsAndLongRetryAfter(t *testing.T) {
	f := newFakeAPI(t, "openai", "k", fakeReply{status: 503, body: `{"error":{"message":"down"}}`})
	sl := &sleepRecorder{}
	c := newTestCompressor(t, f.provider(5*time.Second), sl, func(c *CompressorConfig) { c.MaxAttempts = 4 })
	if _, _, err := c.Observe(context.Background(), toolCalls(1, "s")); ClassOf(err) != Transient || f.count() != 4 {
		t.Fatalf("err %v, %d requests; want transient after 4", err, f.count())
	}
	// Backoff grows and stays capped.
	d := sl.got()
	if len(d) != 3 || !(d[0] < d[1] && d[1] < d[2]) {
		t.Fatalf("delays %v", d)
	}

	g := newFakeAPI(t, "anthropic", "k", fakeReply{status: 429, headers: map[string]string{"Retry-After": "3600"}, body: rateLimitBody("anthropic")})
	sl2 := &sleepRecorder{}
	c2 := newTestCompressor(t, g.provider(5*time.Second), sl2)
	_, _, err := c2.Observe(context.Background(), toolCalls(1, "s"))
	var pe *Error
	if !errors.As(err, &pe) || pe.RetryAfter != time.Hour || g.count() != 1 || len(sl2.got()) != 0 {
		t.Fatalf("a 1h Retry-After must be handed back, not slept: %v, %d requests", err, g.count())
	}
}

func TestCompressorTimeoutIsRetried(t *testing.T) {
	f := newFakeAPI(t, "gemini", "k", fakeReply{block: true}, fakeReply{text: goodObservation, in: 10, out: 5})
	c := newTestCompressor(t, f.provider(50*time.Millisecond), &sleepRecorder{})
	obs, _, err := c.Observe(context.Background(), toolCalls(1, "s"))
	if err != nil || len(obs) != 1 || f.count() != 2 {
		t.Fatalf("err %v, %d obs, %d requests", err, len(obs), f.count())
	}
}

func TestCompressorEmptyAnswerSkips(t *testing.T) {
	f := newFakeAPI(t, "openai", "k", fakeReply{text: "", in: 10, out: 0})
	c := newTestCompressor(t, f.provider(time.Second), &sleepRecorder{})
	obs, u, err := c.Observe(context.Background(), toolCalls(1, "s"))
	if err != nil || len(obs) != 0 || u.InputTokens != 10 {
		t.Fatalf("obs %v usage %+v err %v", obs, u, err)
	}
}

func TestCompressorBatchesASessionIntoOneRequest(t *testing.T) {
	f := newFakeAPI(t, "anthropic", "k", fakeReply{text: goodObservation, in: 900, out: 100})
	c := newTestCompressor(t, f.provider(time.Second), &sleepRecorder{})
	if _, _, err := c.Observe(context.Background(), toolCalls(6, "s")); err != nil {
		t.Fatal(err)
	}
	if f.count() != 1 {
		t.Fatalf("%d requests for one small batch, want 1", f.count())
	}
	prompt := f.request(0).Body["messages"].([]any)[0].(map[string]any)["content"].(string)
	if strings.Count(prompt, "<tool_call ") != 6 || strings.Count(prompt, "make the budget store safe") != 1 {
		t.Fatalf("prompt should hold 6 calls and the user prompt once:\n%s", prompt)
	}
}

func TestCompressorCapsContent(t *testing.T) {
	f := newFakeAPI(t, "openai", "k", fakeReply{text: goodObservation, in: 1, out: 1})
	c := newTestCompressor(t, f.provider(time.Second), &sleepRecorder{}, func(c *CompressorConfig) {
		c.MaxCallBytes, c.MaxRequestBytes = 2000, 8000
	})
	calls := toolCalls(10, "s")
	for i := range calls {
		calls[i].ToolResponse = []byte(`"` + strings.Repeat("é<x>", 20000) + `"`)
	}
	if _, _, err := c.Observe(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
	if f.count() < 3 {
		t.Fatalf("10 capped calls of ~2 KB each should need several 8 KB requests, got %d", f.count())
	}
	for i := 0; i < f.count(); i++ {
		msgs := f.request(i).Body["messages"].([]any)
		prompt := msgs[len(msgs)-1].(map[string]any)["content"].(string)
		if len(prompt) > 8000 {
			t.Fatalf("request %d prompt is %d bytes, cap 8000", i, len(prompt))
		}
		if !strings.Contains(prompt, "truncated") {
			t.Fatalf("request %d does not say it was truncated", i)
		}
	}
}

func TestCompressorSummarize(t *testing.T) {
	f := newFakeAPI(t, "gemini", "k", fakeReply{text: goodSummary, in: 300, out: 60})
	c := newTestCompressor(t, f.provider(time.Second), &sleepRecorder{})
	in := ai.SessionInput{SessionID: "s", Project: "p", Request: "add providers", LastAssistantMessage: "done",
		Observations: []ai.Observation{{Type: memory.TypeFeature, Title: "Add chain"}}}
	s, u, err := c.Summarize(context.Background(), in)
	if err != nil || s.Completed != "three clients" || u.OutputTokens != 60 {
		t.Fatalf("summary %+v usage %+v err %v", s, u, err)
	}
	prompt := f.request(0).Raw
	if !strings.Contains(prompt, "Add chain") || !strings.Contains(prompt, "MODE SWITCH") {
		t.Fatalf("summary prompt lacks observations or mode switch: %s", prompt)
	}
}

func TestCompressorContextCancelStopsRetrying(t *testing.T) {
	f := newFakeAPI(t, "openai", "k", fakeReply{status: 503, body: `{}`})
	ctx, cancel := context.WithCancel(context.Background())
	c := newTestCompressor(t, f.provider(time.Second), &sleepRecorder{}, func(cfg *CompressorConfig) {
		cfg.Sleep = func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }
	})
	if _, _, err := c.Observe(ctx, toolCalls(1, "s")); !errors.Is(err, context.Canceled) || f.count() != 1 {
		t.Fatalf("err %v after %d requests", err, f.count())
	}
}

func TestCompressorNeverSendsPrivateOrSecrets(t *testing.T) {
	f := newFakeAPI(t, "openai", "k", fakeReply{text: goodObservation, in: 1, out: 1}, fakeReply{text: goodSummary})
	c := newTestCompressor(t, f.provider(time.Second), &sleepRecorder{})
	calls := toolCalls(1, "s")
	calls[0].ToolResponse = []byte(`"config: <private>my diary</private> AWS=AKIAABCDEFGHIJKLMNOP"`)
	calls[0].Prompt = "use sk-ant-api03-abcdefghijklmnopqrstuvwx please"
	if _, _, err := c.Observe(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Summarize(context.Background(), ai.SessionInput{Request: "<private>diary</private> go", LastAssistantMessage: "token ghp_abcdefghijklmnopqrstuvwxyz0123456789"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < f.count(); i++ {
		raw := f.request(i).Raw
		for _, bad := range []string{"diary", "AKIAABCDEFGHIJKLMNOP", "sk-ant-api03", "ghp_abc"} {
			if strings.Contains(raw, bad) {
				t.Fatalf("request %d carries %q: %s", i, bad, raw)
			}
		}
	}
}

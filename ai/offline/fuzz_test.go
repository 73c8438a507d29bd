package offline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/memnode/memnode/ai"
)

// FuzzOfflineObserve feeds arbitrary tool calls to the offline compressor: it must never
// panic, and what it returns must stay within the compactness bounds. Seeds live in
// testdata/fuzz/FuzzOfflineObserve (the fixture session's calls and malformed variants).
func FuzzOfflineObserve(f *testing.F) {
	f.Add("Edit", []byte(`{"file_path":"/a/b.go","old_string":"x","new_string":"if y {"}`), []byte(`{}`), "fix", "/a")
	f.Fuzz(func(t *testing.T, tool string, input, response []byte, prompt, cwd string) {
		c := ai.ToolCall{ToolName: tool, Cwd: cwd, Prompt: prompt, ToolInput: input, ToolResponse: response}
		obs, _, err := New().Observe(context.Background(), []ai.ToolCall{c})
		if err != nil {
			t.Fatal(err)
		}
		if len(obs) > 1 {
			t.Fatalf("one call gave %d observations", len(obs))
		}
		for _, o := range obs {
			checkBounded(t, o)
			if _, err := json.Marshal(o); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// FuzzOfflineSummarize feeds arbitrary assistant messages to Summarize.
func FuzzOfflineSummarize(f *testing.F) {
	f.Add("Fixed: x because y. Next: z.")
	f.Fuzz(func(t *testing.T, msg string) {
		s, _, err := New().Summarize(context.Background(), ai.SessionInput{Request: msg, LastAssistantMessage: msg})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{s.Request, s.Investigated, s.Learned, s.Completed, s.NextSteps, s.Notes} {
			if n := len([]rune(v)); n > maxSummaryField+40 {
				t.Fatalf("field of %d runes", n)
			}
			if strings.ContainsAny(v, "\n\r\x00") {
				t.Fatalf("field %q is not one clean line", v)
			}
		}
	})
}

// benchCalls are ordinary payloads, one per common tool kind.
func benchCalls(b *testing.B) map[string]ai.ToolCall {
	b.Helper()
	fixture := fixtureCalls(b)
	gotest := "--- FAIL: TestExpiredTokenReturns401 (0.00s)\n    middleware_test.go:42: status = 500, want 401\nFAIL\nFAIL\tdemo-app/internal/auth\t0.311s\n"
	large := strings.Repeat(goServer, 160) // ~100 KB source file
	return map[string]ai.ToolCall{
		"read":      fixture[0],
		"edit":      fixture[1],
		"bash-test": fixture[2],
		"bash-curl": fixture[3],
		"grep":      fixture[4],
		"bash-fail": call(b, "Bash", fixturePrompt, m{"command": "go test ./..."}, out(gotest, "")),
		"write":     call(b, "Write", fixturePrompt, m{"file_path": cwd + "/internal/server/server.go", "content": goServer}, m{"type": "create"}),
		"mcp":       call(b, "mcp__github__create_issue", "", m{"owner": "dev", "repo": "demo-app", "title": "Refresh ignores errors"}, []m{{"type": "text", "text": "Created issue #42"}}),
		"read-100KB": call(b, "Read", "", m{"file_path": cwd + "/internal/server/big.go"},
			m{"type": "text", "file": m{"filePath": cwd + "/internal/server/big.go", "content": large}}),
	}
}

// BenchmarkOfflineObserve measures one tool call per op; "session" is the five calls of
// the fixture session per op, reported per call as ns/call.
func BenchmarkOfflineObserve(b *testing.B) {
	c := New()
	ctx := context.Background()
	calls := benchCalls(b)
	for _, name := range []string{"read", "edit", "bash-test", "bash-curl", "bash-fail", "grep", "write", "mcp", "read-100KB"} {
		one := []ai.ToolCall{calls[name]}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.Observe(ctx, one); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	session := fixtureCalls(b)
	b.Run("session", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := c.Observe(ctx, session); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(session)), "ns/call")
	})
}

func BenchmarkOfflineSummarize(b *testing.B) {
	c := New()
	ctx := context.Background()
	obs, _, err := c.Observe(ctx, fixtureCalls(b))
	if err != nil {
		b.Fatal(err)
	}
	in := ai.SessionInput{Request: fixturePrompt, LastAssistantMessage: fixtureLastMessage(b), Observations: obs}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Summarize(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

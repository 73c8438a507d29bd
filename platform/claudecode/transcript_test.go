package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLastAssistantMessageFixture(t *testing.T) {
	got, err := lastAssistantMessage("../../testdata/fixtures/claude-code/transcript.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "Fixed: the middleware ignored the parse error") || !strings.HasSuffix(got, "should get the same fix.") {
		t.Fatalf("got %q", got)
	}
}

func line(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func TestLastAssistantMessageShapes(t *testing.T) {
	asst := func(content any) map[string]any {
		return map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": content}}
	}
	user := map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "assistant please"}}
	huge := strings.Repeat("x", 3*transcriptBlock+17) // a line spanning several blocks
	cases := []struct {
		name  string
		lines []any
		want  string
	}{
		{"string content", []any{asst("one"), asst("two")}, "two"},
		{"parts joined", []any{asst([]any{map[string]any{"type": "text", "text": "a"}, map[string]any{"type": "tool_use", "id": "t"}, map[string]any{"type": "text", "text": "b"}})}, "a\nb"},
		{"skips tool-only and user lines", []any{asst("answer"), asst([]any{map[string]any{"type": "tool_use"}}), user}, "answer"},
		{"long line across blocks", []any{asst(huge), user}, huge},
		{"long line before the answer", []any{asst(huge), asst("short")}, "short"},
		{"none", []any{user}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			for _, l := range c.lines {
				b.WriteString(line(t, l))
			}
			b.WriteString("{torn") // a transcript being written has a torn tail
			p := filepath.Join(t.TempDir(), "t.jsonl")
			if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := lastAssistantMessage(p)
			if err != nil || got != c.want {
				t.Fatalf("got %.40q (len %d), err %v; want %.40q (len %d)", got, len(got), err, c.want, len(c.want))
			}
		})
	}
	if _, err := lastAssistantMessage(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("missing transcript: no error")
	}
}

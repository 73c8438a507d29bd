package offline

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
)

const fixturePrompt = "The login endpoint returns 500 when the JWT has expired. Find out why and fix it."

// privateTag emulates the hook, which strips <private> content before the node sees it.
var privateTag = regexp.MustCompile(`(?s)<private>.*?</private>`)

func stripPrivate(s string) string { return privateTag.ReplaceAllString(s, "") }

// fixtureCalls reads the observation events of the Claude Code fixture session.
func fixtureCalls(tb testing.TB) []ai.ToolCall {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "fixtures", "claude-code", "session.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var calls []ai.ToolCall
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev struct {
			Event   string `json:"event"`
			Payload struct {
				SessionID    string          `json:"session_id"`
				Cwd          string          `json:"cwd"`
				ToolName     string          `json:"tool_name"`
				ToolInput    json.RawMessage `json:"tool_input"`
				ToolResponse json.RawMessage `json:"tool_response"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(stripPrivate(sc.Text())), &ev); err != nil {
			tb.Fatal(err)
		}
		if ev.Event != "observation" {
			continue
		}
		calls = append(calls, ai.ToolCall{
			SessionID:    ev.Payload.SessionID,
			Project:      "demo-app",
			Cwd:          ev.Payload.Cwd,
			ToolName:     ev.Payload.ToolName,
			ToolInput:    ev.Payload.ToolInput,
			ToolResponse: ev.Payload.ToolResponse,
			Prompt:       fixturePrompt,
		})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(calls) != 5 {
		tb.Fatalf("fixture has %d observation events, want 5", len(calls))
	}
	return calls
}

// fixtureLastMessage returns the text of the last assistant message of the transcript.
func fixtureLastMessage(tb testing.TB) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", "claude-code", "transcript.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	last := ""
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			tb.Fatal(err)
		}
		if m.Type != "assistant" {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(m.Message.Content, &blocks) != nil {
			continue
		}
		var text []string
		for _, b := range blocks {
			if b.Type == "text" {
				text = append(text, b.Text)
			}
		}
		if len(text) > 0 {
			last = strings.Join(text, "\n")
		}
	}
	if last == "" {
		tb.Fatal("no assistant text in transcript")
	}
	return last
}

func observeAll(tb testing.TB, calls []ai.ToolCall) []ai.Observation {
	tb.Helper()
	obs, usage, err := New().Observe(context.Background(), calls)
	if err != nil {
		tb.Fatal(err)
	}
	if usage.Model != "offline" || usage.InputTokens != 0 || usage.OutputTokens != 0 {
		tb.Fatalf("usage = %+v", usage)
	}
	for _, o := range obs {
		checkBounded(tb, o)
	}
	return obs
}

func dump(tb testing.TB, v any) string {
	tb.Helper()
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func TestOfflineFixtureSessionTellsTheStory(t *testing.T) {
	obs := observeAll(t, fixtureCalls(t))
	if testing.Verbose() {
		t.Log(dump(t, obs))
	}
	if len(obs) != 5 {
		t.Fatalf("got %d observations, want 5 (none of the fixture calls is worthless)", len(obs))
	}

	var edit, tests *ai.Observation
	var modified []string
	for i := range obs {
		o := &obs[i]
		modified = append(modified, o.FilesModified...)
		switch {
		case strings.HasPrefix(o.Title, "Edit "):
			edit = o
		case strings.HasPrefix(o.Title, "Tests "):
			tests = o
		}
	}
	if edit == nil || tests == nil {
		t.Fatalf("missing the Edit or the test run observation:\n%s", dump(t, obs))
	}
	if edit.Type != memory.TypeBugfix {
		t.Errorf("edit type = %q, want bugfix", edit.Type)
	}
	editText := edit.Title + "\n" + strings.Join(edit.Facts, "\n")
	for _, want := range []string{"middleware.go", "jwt.ErrTokenExpired", `"token expired"`, "401", "`claims, _ := parse(tok)` → `claims, err := parse(tok)`"} {
		if !strings.Contains(editText, want) {
			t.Errorf("edit title/facts lack %q:\n%s", want, editText)
		}
	}
	if !strings.Contains(edit.Title, "middleware.go") || !strings.Contains(edit.Title, "jwt.ErrTokenExpired") {
		t.Errorf("edit title %q should name the file and the handled error", edit.Title)
	}
	if !strings.Contains(edit.Narrative, "Fix for:") || !strings.Contains(edit.Narrative, "JWT has expired") {
		t.Errorf("edit narrative does not tie the change to the request: %q", edit.Narrative)
	}
	if tests.Title != "Tests pass: go test ./internal/auth/..." {
		t.Errorf("test run title = %q", tests.Title)
	}
	if !containsStr(modified, "internal/auth/middleware.go") {
		t.Errorf("files_modified = %v, want internal/auth/middleware.go", modified)
	}
	if !containsStr(obs[0].FilesRead, "internal/auth/middleware.go") || obs[0].Title != "Read internal/auth/middleware.go" {
		t.Errorf("read observation = %+v", obs[0])
	}
	if !containsStr(obs[0].Facts, "defines: Middleware") {
		t.Errorf("read facts %v lack the declared Middleware", obs[0].Facts)
	}
	if !containsStr(edit.Concepts, "auth") || !containsStr(edit.Concepts, "jwt") {
		t.Errorf("edit concepts = %v, want auth and jwt", edit.Concepts)
	}
	for _, o := range obs {
		if strings.Contains(dump(t, o), "SECRET-") {
			t.Errorf("observation leaks fixture secret: %s", dump(t, o))
		}
	}

	sum, usage, err := New().Summarize(context.Background(), ai.SessionInput{
		SessionID:            "5f0c9a3e",
		Project:              "demo-app",
		Request:              fixturePrompt,
		LastAssistantMessage: fixtureLastMessage(t),
		Observations:         obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if usage.Model != "offline" {
		t.Errorf("usage model = %q", usage.Model)
	}
	if testing.Verbose() {
		t.Log(dump(t, sum))
	}
	if sum.Request != fixturePrompt {
		t.Errorf("request = %q", sum.Request)
	}
	mustContain(t, "learned", sum.Learned, "ignored the parse error", "nil claims")
	mustContain(t, "completed", sum.Completed, `401 "token expired"`, "TestExpiredTokenReturns401", "tests pass")
	mustContain(t, "next steps", sum.NextSteps, "refresh endpoint")
	mustContain(t, "investigated", sum.Investigated, "internal/auth/middleware.go", "parse")
	if strings.Contains(sum.Completed, "nil claims") || strings.Contains(sum.Learned, "refresh endpoint") {
		t.Errorf("sentences landed in the wrong section: %s", dump(t, sum))
	}
}

func mustContain(tb testing.TB, field, got string, wants ...string) {
	tb.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			tb.Errorf("%s %q lacks %q", field, got, w)
		}
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkBounded asserts the compactness bounds every observation must meet.
func checkBounded(tb testing.TB, o ai.Observation) {
	tb.Helper()
	runes := func(s string) int { return len([]rune(s)) }
	switch o.Type {
	case memory.TypeBugfix, memory.TypeFeature, memory.TypeRefactor, memory.TypeChange, memory.TypeDiscovery, memory.TypeDecision:
	default:
		tb.Errorf("type %q is not one of the vocabulary", o.Type)
	}
	if o.Title == "" || runes(o.Title) > maxTitle {
		tb.Errorf("title %q: empty or longer than %d runes", o.Title, maxTitle)
	}
	if runes(o.Subtitle) > maxSubtitle || runes(o.Narrative) > maxNarrative {
		tb.Errorf("subtitle/narrative too long: %q / %q", o.Subtitle, o.Narrative)
	}
	if len(o.Facts) > maxFacts || len(o.Concepts) > maxConcepts || len(o.FilesRead) > maxFiles || len(o.FilesModified) > maxFiles {
		tb.Errorf("too many items: %d facts, %d concepts, %d read, %d modified", len(o.Facts), len(o.Concepts), len(o.FilesRead), len(o.FilesModified))
	}
	for _, f := range o.Facts {
		if f == "" || runes(f) > maxFact || strings.ContainsAny(f, "\n\r\t") {
			tb.Errorf("fact %q: empty, multi-line or longer than %d runes", f, maxFact)
		}
	}
	for _, s := range append(append([]string{o.Title, o.Subtitle, o.Narrative}, o.Facts...), o.FilesRead...) {
		if !utf8ValidNoControl(s) {
			tb.Errorf("%q has invalid UTF-8 or control characters", s)
		}
	}
}

func utf8ValidNoControl(s string) bool {
	for _, r := range s {
		if r == '\uFFFD' || r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// One fact once: by meaning, not by bytes.
func TestDistinctFacts(t *testing.T) {
	for _, tc := range []struct {
		facts    []string
		subtitle string
		want     []string
	}{
		{[]string{"16 lines", "defines: Middleware"}, "16 lines of Go", []string{"defines: Middleware"}},
		{[]string{"$ curl -s localhost:8080/login", "output: ok"}, "curl -s localhost:8080/login", []string{"output: ok"}},
		{[]string{"16 lines", "16 lines of Go"}, "", []string{"16 lines of Go"}},
		{[]string{"result: HTTP 401", "error: HTTP 401"}, "", []string{"error: HTTP 401"}},
		{[]string{"exit 1", "exit 10", "Exit  1."}, "", []string{"exit 1", "exit 10"}},
		{[]string{"$ go test ./...", "go test ./..."}, "", []string{"$ go test ./..."}},
	} {
		if got := distinctFacts(slices.Clone(tc.facts), tc.subtitle); !slices.Equal(got, tc.want) {
			t.Errorf("distinctFacts(%q, %q) = %q, want %q", tc.facts, tc.subtitle, got, tc.want)
		}
	}
}

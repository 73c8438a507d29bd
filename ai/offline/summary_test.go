package offline

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
)

func summarizeT(t *testing.T, in ai.SessionInput) ai.Summary {
	t.Helper()
	s, usage, err := New().Summarize(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if usage != (ai.Usage{Model: "offline"}) {
		t.Errorf("usage = %+v", usage)
	}
	for name, v := range map[string]string{"request": s.Request, "investigated": s.Investigated, "learned": s.Learned,
		"completed": s.Completed, "next_steps": s.NextSteps, "notes": s.Notes} {
		if n := len([]rune(v)); n > maxSummaryField+40 {
			t.Errorf("%s is %d runes long", name, n)
		}
	}
	if testing.Verbose() {
		t.Log(dump(t, s))
	}
	return s
}

func TestOfflineSummarizeMarkdown(t *testing.T) {
	msg := "## Root cause\n" +
		"The cache key **ignored** the tenant ID, so users saw each other's data.\n\n" +
		"## Changes\n" +
		"- Added `tenantID` to the cache key in `cache/key.go`\n" +
		"- Updated the tests in [key_test.go](cache/key_test.go)\n\n" +
		"```go\nfunc key(t, id string) string { return t + \":\" + id }\n```\n\n" +
		"**Next steps:**\n" +
		"- [ ] Flush the production cache after the deploy\n" +
		"- Consider adding a lint rule.\n\n" +
		"Note: the old keys expire after 24h.\n" +
		"Let me know if you want anything else!"
	s := summarizeT(t, ai.SessionInput{Request: "Users see other tenants' data", LastAssistantMessage: msg})
	mustContain(t, "learned", s.Learned, "ignored the tenant ID, so users saw each other's data")
	mustContain(t, "completed", s.Completed, "Added tenantID to the cache key in cache/key.go", "Updated the tests in key_test.go")
	mustContain(t, "next steps", s.NextSteps, "Flush the production cache", "lint rule")
	mustContain(t, "notes", s.Notes, "The old keys expire after 24h")
	all := dump(t, s)
	for _, bad := range []string{"func key(", "Let me know", "**", "`", "](cache"} {
		if strings.Contains(all, bad) {
			t.Errorf("summary contains %q:\n%s", bad, all)
		}
	}
	if s.Request != "Users see other tenants' data" {
		t.Errorf("request = %q", s.Request)
	}
}

func TestOfflineSummarizeCueWords(t *testing.T) {
	msg := "I looked at the retry loop in worker.go. The worker retried forever because the backoff was never reset. " +
		"I changed it to reset after a success and added a cap of 5 attempts. The flaky test now passes. " +
		"We should also add a metric for retries. Would you like me to open a PR?"
	s := summarizeT(t, ai.SessionInput{LastAssistantMessage: msg})
	mustContain(t, "investigated", s.Investigated, "I looked at the retry loop in worker.go.")
	mustContain(t, "learned", s.Learned, "retried forever because the backoff was never reset")
	mustContain(t, "completed", s.Completed, "added a cap of 5 attempts", "The flaky test now passes.")
	mustContain(t, "next steps", s.NextSteps, "add a metric for retries", "open a PR")
	if strings.Contains(s.Completed, "metric") || strings.Contains(s.Learned, "cap of 5") {
		t.Errorf("misfiled sentences: %s", dump(t, s))
	}
}

func TestOfflineSummarizeFromObservations(t *testing.T) {
	obs := []ai.Observation{
		{Type: memory.TypeDiscovery, Title: "Read internal/queue/worker.go", FilesRead: []string{"internal/queue/worker.go"}},
		{Type: memory.TypeDiscovery, Title: `Search "backoff": 3 matching files`, FilesRead: []string{"a.go", "b.go", "c.go"}},
		{Type: memory.TypeBugfix, Title: "Edit internal/queue/worker.go: handle ErrPermanent", FilesModified: []string{"internal/queue/worker.go"}},
		{Type: memory.TypeDiscovery, Title: "Tests pass: go test ./internal/queue/"},
		{Type: memory.TypeDiscovery, Title: "Tests fail: go test ./..."},
	}
	s := summarizeT(t, ai.SessionInput{Request: "fix the retry storm", Observations: obs})
	mustContain(t, "investigated", s.Investigated, "Read internal/queue/worker.go.", `Search "backoff": 3 matching files.`)
	if strings.Contains(s.Investigated, "a.go") {
		t.Errorf("search hits are listed as read files: %q", s.Investigated)
	}
	mustContain(t, "completed", s.Completed, "Modified internal/queue/worker.go.")
	mustContain(t, "notes", s.Notes, "Last test run failed: go test ./...")
	if s.Learned != "" || s.NextSteps != "" {
		t.Errorf("learned/next steps invented from nothing: %s", dump(t, s))
	}

	empty := summarizeT(t, ai.SessionInput{})
	if empty != (ai.Summary{}) {
		t.Errorf("empty input gave %+v", empty)
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Fixed it. Tests pass!", []string{"Fixed it.", "Tests pass!"}},
		{"Use e.g. the v1.2.3 tag in main.go. Done.", []string{"Use e.g. the v1.2.3 tag in main.go.", "Done."}},
		{"It returned 500 (panic). Now it returns 401.", []string{"It returned 500 (panic).", "Now it returns 401."}},
		{"Why? Because x.Foo was nil. ok", []string{"Why?", "Because x.Foo was nil. ok"}},
		{"Ends with \"quote.\" Next one.", []string{"Ends with \"quote.\"", "Next one."}},
		{"no terminal punctuation", []string{"no terminal punctuation"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := splitSentences(tt.in, nil); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitSentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestMarkdownUnits(t *testing.T) {
	md := "# Summary\nIntro line one\ncontinues here.\n\n1. first item\n2) second item\n* star item\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n~~~\ncode\n~~~\n> quoted text\n"
	var got []string
	for _, u := range markdownUnits(md) {
		got = append(got, u.section+":"+u.text)
	}
	want := []string{"completed:Intro line one continues here.", "completed:first item", "completed:second item",
		"completed:star item", "completed:a, b", "completed:1, 2", "completed:quoted text"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("units = %q\nwant    %q", got, want)
	}
}

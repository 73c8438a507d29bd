package memory_test

import (
	"encoding/hex"
	"testing"

	"github.com/memnode/memnode/memory"
)

// The content hash is compared across devices and stored in every replica: a change to how
// it is computed would store a replayed observation twice. The want value pins it.
func TestHashContentIsStable(t *testing.T) {
	o := memory.Observation{SessionID: "s1", Type: memory.TypeBugfix, Title: "t", Subtitle: "st",
		Narrative: "n", Facts: []string{"a", "b"}, FilesRead: []string{"r"}, FilesModified: []string{"m"}}
	const want = "818f2cc60265d15681cecdc40549a89b"
	if got := o.HashContent(); got != want {
		t.Fatalf("HashContent() = %s, want %s", got, want)
	}
	// Fields outside the content (ID, project, time, origin) do not change it.
	p := o
	p.ID, p.Project, p.CreatedAt, p.Origin, p.HLC = "x", "other", 5, "dev", 9
	if p.HashContent() != want {
		t.Fatal("HashContent depends on a field that is not content")
	}
	// A list boundary is part of the content.
	q := o
	q.Facts = []string{"ab"}
	if q.HashContent() == want {
		t.Fatal("HashContent ignores fact boundaries")
	}
}

func TestTypeEmoji(t *testing.T) {
	for typ, want := range map[string]string{
		memory.TypeBugfix: "🔴", memory.TypeFeature: "🟣", memory.TypeRefactor: "🔄",
		memory.TypeChange: "✅", memory.TypeDiscovery: "🔵", memory.TypeDecision: "⚖️",
		"BUGFIX": "🔴", "unknown": "•",
	} {
		if got := memory.TypeEmoji(typ); got != want {
			t.Errorf("TypeEmoji(%q) = %q, want %q", typ, got, want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2} {
		if got := memory.EstimateTokens(s); got != want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestNewEventID(t *testing.T) {
	a, b := memory.NewEventID(), memory.NewEventID()
	if len(a) != 32 || a == b {
		t.Fatalf("event IDs %q, %q: want two distinct 32-hex-digit IDs", a, b)
	}
	if _, err := hex.DecodeString(a); err != nil {
		t.Fatalf("event ID %q is not hex: %v", a, err)
	}
}

func TestPolicy(t *testing.T) {
	p := memory.Policy{ExcludedProjects: []string{"secret-*", "[bad"}, SkipTools: []string{"AskUserQuestion"}}
	for _, c := range []struct {
		tool, project string
		want          bool
	}{
		{"Edit", "demo", true},
		{"Edit", "secret-app", false},
		{"askuserquestion", "demo", false}, // tool names compare case-insensitively, in hook and node alike
		{"AskUserQuestion", "demo", false},
		{"TodoWrite", "demo", false}, // housekeeping, not in SkipTools: never recorded
		{"bashoutput", "demo", false},
		{"Bash", "[bad", true}, // a malformed glob matches nothing
	} {
		if got := p.Recordable(c.tool, c.project); got != c.want {
			t.Errorf("Recordable(%q, %q) = %v, want %v", c.tool, c.project, got, c.want)
		}
	}
	if !(memory.Policy{}).ToolSkipped("TodoWrite") || (memory.Policy{}).ToolSkipped("Edit") {
		t.Error("with no settings, TodoWrite must be skipped and Edit recorded")
	}
}

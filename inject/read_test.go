package inject

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

// fakeReader is a Reader whose answers are fields.
type fakeReader struct {
	obs   []memory.Observation
	sums  []memory.Summary
	pins  []memory.Observation
	names map[string]string
	err   error
	asked []int // limits asked for: observations, summaries
}

var _ Reader = (*fakeReader)(nil)

func (f *fakeReader) Origin() string { return "dev-a" }
func (f *fakeReader) RecentObservations(_ context.Context, _ string, limit int) ([]memory.Observation, error) {
	f.asked = append(f.asked, limit)
	return f.obs, nil
}
func (f *fakeReader) RecentSummaries(_ context.Context, _ string, limit int) ([]memory.Summary, error) {
	f.asked = append(f.asked, limit)
	return f.sums, f.err
}
func (f *fakeReader) PinnedObservations(context.Context, string, int) ([]memory.Observation, error) {
	return f.pins, nil
}
func (f *fakeReader) ProjectStats(context.Context, string) (int, int, error) { return 42, 9000, nil }
func (f *fakeReader) DeviceNames(context.Context) (map[string]string, error) { return f.names, nil }

func TestReadGathersWhatRenderNeeds(t *testing.T) {
	r := &fakeReader{
		obs:   []memory.Observation{{ID: "o1", Origin: "dev-b", Title: "from the desktop"}},
		sums:  []memory.Summary{{ID: "s1", Origin: "dev-a"}},
		names: map[string]string{"dev-b": "desktop"},
	}
	in, err := Read(context.Background(), r, "billing", Limits{Observations: 50, Full: 5, Sessions: 3})
	if err != nil {
		t.Fatal(err)
	}
	if in.Project != "billing" || in.LocalOrigin != "dev-a" || len(in.Observations) != 1 || len(in.Summaries) != 1 ||
		in.TotalObservations != 42 || in.TotalDiscoveryTokens != 9000 || in.DeviceName("dev-b") != "desktop" {
		t.Fatalf("input = %+v", in)
	}
	if len(r.asked) != 2 || r.asked[0] != 50 || r.asked[1] != 3 {
		t.Fatalf("limits asked = %v, want observations 50 and sessions 3", r.asked)
	}
	// A pinned observation heads the context and is not repeated in the rows.
	r.obs = append(r.obs, memory.Observation{ID: "o2", Title: "pinned one"})
	r.pins = []memory.Observation{{ID: "o2", Title: "pinned one"}}
	in, err = Read(context.Background(), r, "billing", Limits{Observations: 50, Full: 5, Sessions: 3})
	if err != nil || len(in.Pinned) != 1 || len(in.Observations) != 1 || in.Observations[0].ID != "o1" {
		t.Fatalf("with a pin: %+v, %v", in, err)
	}
	r.err = errors.New("disk on fire")
	if _, err := Read(context.Background(), r, "billing", Limits{}); !errors.Is(err, r.err) {
		t.Fatalf("error = %v, want it wrapped", err)
	}
}

// TestPinnedNotesHeadTheContext: pinned and global notes come first, newest first, within
// the token cap (the rest counted), and a project with nothing but a global note still gets
// a context.
func TestPinnedNotesHeadTheContext(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	in := Input{Project: "fresh", Now: now, Location: time.UTC, Pinned: []memory.Observation{
		{ID: "g1", Project: memory.GlobalProject, Title: "Use pnpm", Narrative: "Use pnpm, never npm.", ToolName: "save_memory"},
		{ID: "p1", Project: "fresh", Title: "Deploy on Fridays is banned", ToolName: "save_memory"},
		{ID: "p2", Project: "fresh", Title: "old pinned", Narrative: strings.Repeat("long words ", 200), ToolName: "Bash"},
	}}
	out := Render(in, Limits{Observations: 10, Sessions: 3, PinnedTokens: 60})
	head := strings.Index(out, "## Always keep in mind")
	if head < 0 {
		t.Fatalf("no pinned block:\n%s", out)
	}
	g, p := strings.Index(out, "g1 🌐 (global) Use pnpm, never npm."), strings.Index(out, "p1 📌 Deploy on Fridays is banned")
	if g < head || p < g {
		t.Errorf("global then pinned, in order, under the heading:\n%s", out)
	}
	if !strings.Contains(out, "(1 more pinned or global notes: memnode search)") || strings.Contains(out, "old pinned") {
		t.Errorf("the token cap did not hold back the third note:\n%s", out)
	}
	if Render(Input{Project: "fresh", Now: now}, Limits{}) != "" {
		t.Errorf("an empty project with no notes got a context")
	}
	in.Pinned = in.Pinned[2:]
	if out := Render(in, Limits{PinnedTokens: 10}); !strings.Contains(out, "p2 📌 “old pinned: long words") || !strings.Contains(out, "(quoted command output)") {
		t.Errorf("the first note shows even over the cap, a tool's words quoted with their source:\n%s", out)
	}
}

// TestContextSettings: context_expand narrative shows the narrative instead of the facts,
// the economics line can be dropped, the newest summary shown whole, and Filter keeps
// observations by type and concept.
func TestContextSettings(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	long := strings.Repeat("learned a lot ", 40)
	in := Input{Project: "p", Now: now, Location: time.UTC, TotalObservations: 2,
		Observations: []memory.Observation{
			{ID: "o2", Type: "bugfix", Title: "fixed it", Facts: []string{"fact one"}, Narrative: "the story of the fix", Concepts: []string{"auth"}, ToolName: "save_memory", CreatedAt: now.UnixMilli()},
			{ID: "o1", Type: "discovery", Title: "looked", Facts: []string{"fact two"}, Concepts: []string{"build"}, ToolName: "save_memory", CreatedAt: now.UnixMilli() - 1000},
		},
		Summaries: []memory.Summary{{ID: "s1", Request: "do it", Investigated: "the logs", Learned: long, CreatedAt: now.UnixMilli()}},
	}
	def := Render(in, Limits{Observations: 10, Full: 5, Sessions: 3})
	if !strings.Contains(def, "fact one") || strings.Contains(def, "the story of the fix") || !strings.Contains(def, "Token economics") ||
		strings.Contains(def, "Investigated") || strings.Contains(def, long) {
		t.Errorf("defaults:\n%s", def)
	}
	set := Render(in, Limits{Observations: 10, Full: 5, Sessions: 3, Narrative: true, NoEconomics: true, LastSummaryFull: true})
	if strings.Contains(set, "fact one") || !strings.Contains(set, "the story of the fix") || !strings.Contains(set, "fact two") ||
		strings.Contains(set, "Token economics") || !strings.Contains(set, "Investigated: “the logs”") || !strings.Contains(set, strings.TrimSpace(long)) {
		t.Errorf("narrative, no economics, last summary whole:\n%s", set)
	}
	ids := func(obs []memory.Observation) string {
		var out []string
		for _, o := range obs {
			out = append(out, o.ID)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		types, xtypes, concepts, xconcepts []string
		want                               string
	}{
		{nil, nil, nil, nil, "o2,o1"},
		{[]string{"BugFix"}, nil, nil, nil, "o2"},
		{nil, []string{"bugfix"}, nil, nil, "o1"},
		{nil, nil, []string{"build"}, nil, "o1"},
		{nil, nil, nil, []string{"build"}, "o2"},
		{[]string{"bugfix"}, nil, nil, []string{"auth"}, ""},
	} {
		if got := ids(Filter(in.Observations, c.types, c.xtypes, c.concepts, c.xconcepts)); got != c.want {
			t.Errorf("Filter(%v %v %v %v) = %q, want %q", c.types, c.xtypes, c.concepts, c.xconcepts, got, c.want)
		}
	}
}

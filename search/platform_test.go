package search_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// Records carry the coding agent of their session: search and timeline filter by it, and the
// index names every agent but the default one.
func TestSearchAndTimelineFilterByPlatform(t *testing.T) {
	ctx := context.Background()
	r := testkit.OpenReplica(t, "dev-a")
	for i, p := range []string{"claude-code", "codex", "gemini-cli"} {
		sid := "s-" + p
		_, err := r.Commit(ctx, &store.Batch{
			Sessions: []memory.Session{{ID: sid, Project: "shop", Platform: p, StartedAt: int64(1_700_000_000_000 + i*1000), Status: "active"}},
			Observations: []memory.Observation{{SessionID: sid, Project: "shop", Type: memory.TypeBugfix,
				Title: "Fixed the cart total rounding in " + p, Narrative: "cart total rounding was off by a cent",
				CreatedAt: int64(1_700_000_000_000 + i*1000 + 1)}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	svc := search.NewService(r, search.Config{})

	all, err := svc.Search(ctx, apitype.SearchQuery{Text: "cart rounding"})
	if err != nil || len(all.Hits) != 3 {
		t.Fatalf("unfiltered: %v, %d hits", err, len(all.Hits))
	}
	for _, h := range all.Hits {
		line := apitype.IndexLine(h)
		want := strings.TrimPrefix(h.Title, "Fixed the cart total rounding in ")
		if h.Platform != want {
			t.Errorf("hit %q has platform %q, want %q", h.Title, h.Platform, want)
		}
		named := strings.Contains(line, " via "+want+"]")
		if named != (want != apitype.DefaultPlatform) {
			t.Errorf("index line %q: names the platform %v", line, named)
		}
	}

	res, err := svc.Search(ctx, apitype.SearchQuery{Text: "cart rounding", Platform: "codex"})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Platform != "codex" {
		t.Fatalf("platform codex: %v %+v", err, res.Hits)
	}
	// claude-mem's platformSource for Claude Code is "claude".
	if cm, err := svc.Search(ctx, apitype.SearchQuery{Text: "cart rounding", Platform: "claude"}); err != nil || len(cm.Hits) != 1 || cm.Hits[0].Platform != "claude-code" {
		t.Fatalf("platform claude: %v %+v", err, cm.Hits)
	}
	if res, err := svc.Search(ctx, apitype.SearchQuery{Platform: "cursor"}); err != nil || len(res.Hits) != 0 {
		t.Fatalf("platform cursor: %v, %d hits", err, len(res.Hits))
	}
	tl, err := svc.Timeline(ctx, apitype.TimelineQuery{Anchor: res.Hits[0].ID, Before: 5, After: 5, Platform: "codex"})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range tl.Items {
		if it.Platform != "codex" {
			t.Errorf("timeline filtered to codex holds %+v", it)
		}
	}
	if len(tl.Items) != 1 {
		t.Errorf("timeline filtered to codex has %d items, want the anchor only", len(tl.Items))
	}
}

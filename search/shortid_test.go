package search_test

import (
	"context"
	"errors"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/search"
)

// TestServiceShowsAndAcceptsShortIDs: search and timeline hits carry a short ID of at most
// 8 characters (≤ 3 tokens) that get and timeline accept like the full ID, and an index
// row costs fewer tokens with it.
func TestServiceShowsAndAcceptsShortIDs(t *testing.T) {
	ctx := context.Background()
	r := testkit.OpenReplica(t, "dev-a")
	importSample(t, r)
	svc := search.NewService(r, search.Config{})
	res, err := svc.Search(ctx, apitype.SearchQuery{Limit: 50})
	if err != nil || len(res.Hits) < 15 {
		t.Fatalf("search: %v, %d hits", err, len(res.Hits))
	}
	var fullTok, shortTok int
	for _, h := range res.Hits {
		if len(h.Short) < 6 || len(h.Short) > 8 || memory.EstimateTokens(h.Short) > 3 {
			t.Fatalf("hit %s: short ID %q", h.ID, h.Short)
		}
		shortTok += memory.EstimateTokens(apitype.IndexLine(h))
		long := h
		long.Short = ""
		fullTok += memory.EstimateTokens(apitype.IndexLine(long))
		recs, err := svc.Get(ctx, []string{h.Short})
		if err != nil || len(recs.Items) != 1 || len(recs.Missing) != 0 {
			t.Fatalf("get %s: %v %+v", h.Short, err, recs)
		}
		tl, err := svc.Timeline(ctx, apitype.TimelineQuery{Anchor: h.Short, Before: 1, After: 1})
		if err != nil || tl.AnchorID != h.ID {
			t.Fatalf("timeline %s: %v anchor %q, want %s", h.Short, err, tl.AnchorID, h.ID)
		}
		for _, it := range tl.Items {
			if it.Short == "" {
				t.Fatalf("timeline item %s without a short ID", it.ID)
			}
		}
	}
	n := len(res.Hits)
	t.Logf("tokens per index row (memory.EstimateTokens): %.1f with full IDs, %.1f with short IDs, over %d rows",
		float64(fullTok)/float64(n), float64(shortTok)/float64(n), n)
	if shortTok >= fullTok {
		t.Errorf("short IDs did not make the index cheaper: %d vs %d tokens", shortTok, fullTok)
	}
	// Full IDs still work; an unknown short form is simply missing.
	if recs, err := svc.Get(ctx, []string{res.Hits[0].ID, "ZZZZZZ"}); err != nil || len(recs.Items) != 1 || len(recs.Missing) != 1 {
		t.Fatalf("get full + unknown: %v %+v", err, recs)
	}
	if _, err := svc.Timeline(ctx, apitype.TimelineQuery{Anchor: "ZZZZZZ"}); err == nil || errors.Is(err, search.ErrInvalid) {
		t.Errorf("timeline of an unknown short ID: %v, want a not-found error", err)
	}
}

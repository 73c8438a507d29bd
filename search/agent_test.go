package search_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// An agent's query matches words; only the viewer's as-you-type box (Prefix) also
// matches the last word as the start of a longer one.
func TestPrefixOnlyWhenTyping(t *testing.T) {
	r := testkit.OpenReplica(t, "a")
	ids := commitTexts(t, r, "webhook retries back off", "unrelated note")
	s := search.New(r, search.Config{})
	ctx := context.Background()
	res, err := s.Search(ctx, search.Query{Text: "retries webh"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].ID != ids[0] {
		t.Fatalf("agent query: want the record through 'retries' only, got %+v", res.Hits)
	}
	res, err = s.Search(ctx, search.Query{Text: "webh"})
	if err != nil || len(res.Hits) != 0 {
		t.Fatalf("agent query 'webh' must not match webhook: %v %+v", err, res.Hits)
	}
	res, err = s.Search(ctx, search.Query{Text: "webh", Prefix: true})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].ID != ids[0] {
		t.Fatalf("typing 'webh' must find webhook: %v %+v", err, res.Hits)
	}
}

// In the default (all kinds) search a session's summary, which repeats its observation in
// more words, ranks behind the observation, and summaries of other sessions take at most
// one place in each five.
func TestSummariesDoNotCrowdObservations(t *testing.T) {
	r := testkit.OpenReplica(t, "a")
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	b := &store.Batch{}
	for i := range 6 {
		sid := fmt.Sprintf("s%d", i)
		b.Observations = append(b.Observations, memory.Observation{SessionID: sid, Project: "p", Type: "bugfix",
			Title: fmt.Sprintf("Fix upstream dial timeout %d", i), Narrative: "dial", CreatedAt: base + int64(i)*60_000})
		b.Summaries = append(b.Summaries, memory.Summary{SessionID: sid, Project: "p", Request: "upstream dial timeout",
			Completed: "upstream dial timeout upstream dial timeout fixed", CreatedAt: base + int64(i)*60_000 + 1})
	}
	for i := range 4 { // sessions with a summary only
		b.Summaries = append(b.Summaries, memory.Summary{SessionID: fmt.Sprintf("t%d", i), Project: "p",
			Request: "upstream dial timeout", Completed: "upstream dial timeout upstream dial timeout", CreatedAt: base + int64(100+i)*60_000})
	}
	if _, err := r.Commit(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	s := search.New(r, search.Config{})
	res, err := s.Search(context.Background(), search.Query{Text: "upstream dial timeout", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	kinds := ""
	for _, h := range res.Hits {
		kinds += h.Kind[:1]
	}
	// The best summary-only session first (it leads the bm25 order), the six observations,
	// the next summary-only session (one in each five), then the held-back summaries.
	if kinds != "soooooosss" {
		t.Fatalf("kinds by rank: %s, want soooooosss", kinds)
	}
	others := 0
	for i, h := range res.Hits {
		if h.Kind != apitype.KindObservation {
			others++
			if h.SessionID[0] == 's' && i < 6 {
				t.Errorf("the summary of %s ranks at %d, before its session's observation: %s", h.SessionID, i+1, kinds)
			}
		}
		if i == 4 && others > 1 {
			t.Errorf("%d summaries in the top 5: %s", others, kinds)
		}
	}
	// Observations only: nothing changes.
	res, err = s.Search(context.Background(), search.Query{Text: "upstream dial timeout", Type: search.TypeObservations})
	if err != nil || len(res.Hits) != 6 {
		t.Fatalf("observations: %v %+v", err, res.Hits)
	}
}

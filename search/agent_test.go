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
// more words, ranks behind the observation; summaries of other sessions take no place in
// the top five and at most one in each later five.
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
	// The six observations (the top five are observations whatever bm25 says), then the
	// best summary-only session (one in the second five), then the held-back summaries.
	if kinds != "oooooossss" {
		t.Fatalf("kinds by rank: %s, want oooooossss", kinds)
	}
	others := 0
	for i, h := range res.Hits {
		if h.Kind != apitype.KindObservation {
			others++
			if h.SessionID[0] == 's' && i < 6 {
				t.Errorf("the summary of %s ranks at %d, before its session's observation: %s", h.SessionID, i+1, kinds)
			}
		}
		if i == 4 && others > 0 {
			t.Errorf("%d summaries in the top 5: %s", others, kinds)
		}
	}
	// Observations only: nothing changes.
	res, err = s.Search(context.Background(), search.Query{Text: "upstream dial timeout", Type: search.TypeObservations})
	if err != nil || len(res.Hits) != 6 {
		t.Fatalf("observations: %v %+v", err, res.Hits)
	}
}

// The developer vocabulary: a query word also finds the record in its equivalent (at a
// lower weight), and a record in the asker's own words still ranks first.
func TestDeveloperVocabulary(t *testing.T) {
	r := testkit.OpenReplica(t, "a")
	ids := commitTexts(t, r,
		"retry the upstream when it refuses connections", // 0: the other word
		"unrelated note about dark mode",
		"health checks for every backend of the pool",     // 2: the asker's word
		"compile the regular expression once per matcher", // 3
		"kubernetes manifests moved under deploy/",        // 4
	)
	s := search.New(r, search.Config{})
	ctx := context.Background()
	ranked := func(q string) []string {
		t.Helper()
		res, err := s.Search(ctx, search.Query{Text: q, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.ID)
		}
		return out
	}
	if got := ranked("backend refuses"); len(got) < 2 || got[0] != ids[0] {
		t.Errorf("'backend refuses': want the upstream record first (two words match), got %v", got)
	}
	if got := ranked("backend"); len(got) != 2 || got[0] != ids[2] || got[1] != ids[0] {
		t.Errorf("'backend': want the backend record, then the upstream one, got %v (ids %v)", got, ids)
	}
	if got := ranked("regexp per matcher"); len(got) == 0 || got[0] != ids[3] {
		t.Errorf("'regexp': want the regular expression record, got %v", got)
	}
	if got := ranked("k8s manifests"); len(got) == 0 || got[0] != ids[4] {
		t.Errorf("'k8s': want the kubernetes record, got %v", got)
	}
	// An order by time lists the records with every word first; equivalents only join the
	// any-term records that follow when too few have them.
	res, err := s.Search(ctx, search.Query{Text: "backend", Order: search.OrderNewest})
	if err != nil || len(res.Hits) != 2 || res.Hits[0].ID != ids[2] || res.Mode != "all+any" {
		t.Errorf("newest 'backend': want the backend record, then the upstream one, got %v %s %+v", err, res.Mode, res.Hits)
	}
}

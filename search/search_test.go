package search_test

import (
	"context"
	"strings"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

const sampleDB = "../testdata/fixtures/claude-mem/claude-mem-13.25.3-sample.db"

// importSample loads the claude-mem fixture into r.
func importSample(tb testing.TB, r *replica.Replica) store.ImportResult {
	tb.Helper()
	ctx := context.Background()
	cm, err := importer.OpenClaudeMem(ctx, sampleDB)
	if err != nil {
		tb.Fatal(err)
	}
	defer cm.Close()
	var recs []importer.Record
	if err := cm.Each(ctx, func(rec importer.Record) error { recs = append(recs, rec); return nil }); err != nil {
		tb.Fatal(err)
	}
	res, err := r.Import(ctx, importer.Batch(recs))
	if err != nil {
		tb.Fatal(err)
	}
	return res
}

func TestSearchSampleIdempotency(t *testing.T) {
	ctx := context.Background()
	r := testkit.OpenReplica(t, "dev-a")
	importSample(t, r)
	s := search.New(r, search.Config{})
	res, err := s.Search(ctx, search.Query{Text: "idempotency"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) < 2 {
		t.Fatalf("want ≥ 2 hits, got %+v", res.Hits)
	}
	top := map[string]bool{}
	for _, h := range res.Hits[:min(3, len(res.Hits))] {
		top[h.Title] = true
	}
	for _, want := range []string{"Idempotency keys for Stripe webhook", "Chose DB unique constraint over Redis SETNX for idempotency"} {
		if !top[want] {
			t.Errorf("%q not in the top 3: %+v", want, res.Hits)
		}
	}
	for _, h := range res.Hits {
		if h.Project == "" || h.Origin != importer.ClaudeMemOrigin || h.Time == 0 || h.ID == "" {
			t.Errorf("incomplete hit %+v", h)
		}
	}
}

func TestSearchFiltersAndOrders(t *testing.T) {
	ctx := context.Background()
	r := testkit.OpenReplica(t, "dev-a")
	importSample(t, r)
	s := search.New(r, search.Config{})
	cases := []struct {
		name  string
		q     search.Query
		check func(t *testing.T, hits []apitype.Hit)
	}{
		{"project", search.Query{Text: "build", Project: "mobile-app"}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) == 0 {
				t.Fatal("no hits")
			}
			for _, h := range hits {
				if h.Project != "mobile-app" {
					t.Errorf("hit from %s", h.Project)
				}
			}
		}},
		{"obs type", search.Query{Text: "invoice", ObsTypes: []string{"bugfix"}}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) != 2 {
				t.Fatalf("want the 2 invoice bugfixes, got %+v", hits)
			}
			for _, h := range hits {
				if h.Kind != apitype.KindObservation || h.Type != "bugfix" {
					t.Errorf("hit %+v", h)
				}
			}
		}},
		{"sessions only", search.Query{Text: "webhook", Type: "sessions"}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) != 1 || hits[0].Kind != apitype.KindSummary || !strings.Contains(hits[0].Title, "Stripe webhook") {
				t.Fatalf("hits %+v", hits)
			}
		}},
		{"prompts only", search.Query{Text: "gradle", Type: "prompts"}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) != 1 || hits[0].Kind != apitype.KindPrompt {
				t.Fatalf("hits %+v", hits)
			}
		}},
		{"newest no text", search.Query{Order: "oldest", Limit: 3}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) != 3 || hits[0].Time > hits[1].Time || hits[1].Time > hits[2].Time {
				t.Fatalf("not oldest first: %+v", hits)
			}
		}},
		{"since until", search.Query{Text: "export", Since: 1790953920000, Until: 1790953920001}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) != 1 || hits[0].Time != 1790953920000 {
				t.Fatalf("hits %+v", hits)
			}
		}},
		{"offset", search.Query{Order: "newest", Limit: 2, Offset: 16}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) != 1 { // 9 obs + 4 summaries + 4 prompts = 17
				t.Fatalf("want the last of 17, got %d", len(hits))
			}
		}},
		{"or fallback", search.Query{Text: "gradle zebra"}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) == 0 {
				t.Fatal("OR fallback found nothing")
			}
		}},
		{"phrase", search.Query{Text: `"reverse charge"`}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) == 0 {
				t.Fatal("phrase found nothing")
			}
		}},
		{"device", search.Query{Text: "invoice", Device: "elsewhere"}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) != 0 {
				t.Fatalf("device filter let through %+v", hits)
			}
		}},
		{"path", search.Query{Text: "webhook/handler.go"}, func(t *testing.T, hits []apitype.Hit) {
			if len(hits) == 0 || !strings.Contains(hits[0].Title, "webhook") {
				t.Fatalf("hits %+v", hits)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := s.Search(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, res.Hits)
		})
	}
}

func TestSearchRejectsBadRequests(t *testing.T) {
	s := search.New(testkit.OpenReplica(t, "a"), search.Config{})
	for _, q := range []search.Query{{Type: "files"}, {Order: "random"}, {Limit: 100000}, {Offset: -1}, {Since: 10, Until: 5}} {
		if _, err := s.Search(context.Background(), q); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
}

func TestTimelineAndGet(t *testing.T) {
	ctx := context.Background()
	r := testkit.OpenReplica(t, "dev-a")
	importSample(t, r)
	s := search.New(r, search.Config{})
	res, err := s.Search(ctx, search.Query{Text: "SETNX"})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search: %v %+v", err, res.Hits)
	}
	anchor := res.Hits[0]
	tl, err := s.Timeline(ctx, apitype.TimelineQuery{Anchor: anchor.ID, Before: 2, After: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Items) != 5 || !tl.Items[2].Anchor || tl.Items[2].ID != anchor.ID {
		t.Fatalf("timeline %+v", tl.Items)
	}
	for i := 1; i < len(tl.Items); i++ {
		if tl.Items[i].Time < tl.Items[i-1].Time {
			t.Fatalf("timeline not in time order: %+v", tl.Items)
		}
	}
	// Before the decision: the webhook observation; after it: the session summary.
	if tl.Items[1].Title != "Idempotency keys for Stripe webhook" || tl.Items[3].Kind != apitype.KindSummary {
		t.Errorf("neighbours %+v", tl.Items)
	}
	byQuery, err := s.Timeline(ctx, apitype.TimelineQuery{Query: "SETNX", Before: 1, After: 1})
	if err != nil || byQuery.AnchorID != anchor.ID {
		t.Fatalf("query anchor: %v %+v", err, byQuery)
	}
	sess, err := s.Timeline(ctx, apitype.TimelineQuery{Anchor: "Sc-0002", Before: 1, After: 0})
	if err != nil || len(sess.Items) != 2 || sess.Items[1].Kind != apitype.KindSummary {
		t.Fatalf("session anchor: %v %+v", err, sess.Items)
	}
	at, err := s.Timeline(ctx, apitype.TimelineQuery{Anchor: "2026-10-02T05:10:00Z", Before: 1, After: 1})
	if err != nil || len(at.Items) != 2 || at.Items[1].Time != 1790917800000 {
		t.Fatalf("time anchor: %v %+v", err, at.Items)
	}
	if _, err := s.Timeline(ctx, apitype.TimelineQuery{Anchor: "nonsense"}); err == nil {
		t.Fatal("bad anchor accepted")
	}

	recs, err := search.NewService(r, search.Config{}).Get(ctx, []string{anchor.ID, tl.Items[3].ID, "missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs.Items) != 2 || recs.Items[0].Observation == nil || len(recs.Items[0].Observation.Facts) == 0 ||
		recs.Items[1].Summary == nil || len(recs.Missing) != 1 {
		t.Fatalf("get %+v", recs)
	}
	var b strings.Builder
	if err := apitype.WriteRecords(&b, recs); err != nil || !strings.Contains(b.String(), "SETNX") {
		t.Fatalf("render: %v\n%s", err, b.String())
	}
}

func TestForgetRemovesFromSearch(t *testing.T) {
	ctx := context.Background()
	r := testkit.OpenReplica(t, "dev-a")
	importSample(t, r)
	s := search.New(r, search.Config{})
	res, _ := s.Search(ctx, search.Query{Text: "SETNX"})
	if len(res.Hits) == 0 {
		t.Fatal("no hit")
	}
	if _, err := r.Forget(ctx, []string{res.Hits[0].ID}); err != nil {
		t.Fatal(err)
	}
	res, err := s.Search(ctx, search.Query{Text: "SETNX"})
	if err != nil || len(res.Hits) != 0 {
		t.Fatalf("forgotten record still found: %v %+v", err, res.Hits)
	}
	if again := importSample(t, r); again.Observations != 0 {
		t.Fatalf("re-import resurrected %d observations", again.Observations)
	}
}

func TestDeviceNamesAndFilter(t *testing.T) {
	ctx := context.Background()
	r := testkit.OpenReplica(t, "dev-a")
	importSample(t, r)
	if err := r.SetDeviceName(ctx, importer.ClaudeMemOrigin, "old-laptop"); err != nil {
		t.Fatal(err)
	}
	s := search.New(r, search.Config{})
	for _, dev := range []string{"old-laptop", importer.ClaudeMemOrigin} {
		res, err := s.Search(ctx, search.Query{Text: "invoice", Device: dev})
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("device %s: %v %+v", dev, err, res.Hits)
		}
		for _, h := range res.Hits {
			if h.Device != "old-laptop" || h.Origin != importer.ClaudeMemOrigin {
				t.Errorf("hit %+v", h)
			}
		}
	}
	if !strings.Contains(apitype.IndexLine(apitype.Hit{ID: "X", Title: "t", Project: "p", Device: "old-laptop"}), "@old-laptop") {
		t.Error("index line does not show the device")
	}
}

// TestConcurrentSearchWhileWriting runs searches (sharing the statement cache) while the
// replica takes writes; run with -race.
func TestConcurrentSearchWhileWriting(t *testing.T) {
	ctx := context.Background()
	r := testkit.OpenReplica(t, "dev-a")
	importSample(t, r)
	s := search.New(r, search.Config{})
	defer s.Close()
	errc := make(chan error, 5)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := 0; i < 30; i++ {
				q := []string{"idempotency", "gradle build", "invoice*", `"reverse charge"`}[(g+i)%4]
				if _, err := s.Search(ctx, search.Query{Text: q, Project: []string{"", "billing-api"}[i%2]}); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}(g)
	}
	go func() {
		for i := 0; i < 20; i++ {
			if _, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "w", Project: "billing-api",
				Type: "change", Title: "invoice tweak " + strings.Repeat("x", i), CreatedAt: int64(1790000000000 + i)}}}); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for i := 0; i < 5; i++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

package search_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/embed"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// The hybrid fixture: the deterministic hashing embedder with a synonym table stands in
// for a semantic model, and the keyword side is the real FTS5 path over a real replica.
// Queries come in two kinds built to break one side each:
//   - synonym queries use only words absent from the corpus; the synonym table maps them
//     onto the target's words, so only the vector side can find it;
//   - identifier queries name a rare identifier next to a common word; the common word
//     dominates the similarity of many short observations, while bm25's IDF puts the
//     identifier first.
var hybridSynonyms = map[string]string{
	"authentication": "login", "signin": "login",
	"defect": "bug", "glitch": "bug",
	"datastore": "database", "sluggish": "latency",
	"purge": "delete", "preferences": "config",
	"daemon": "worker", "stalled": "stuck",
}

var hybridCorpus = map[string]string{
	"obs-01": "fixed login bug where the session cookie expired early",
	"obs-02": "added dark mode toggle to the web viewer",
	"obs-03": "database latency spikes during nightly vacuum",
	"obs-04": "delete stale config entries at startup",
	"obs-05": "background worker stuck on a closed channel",
	"obs-06": "error when hook exits non zero",
	"obs-07": "error in sync handshake",
	"obs-08": "error parsing transcript line",
	"obs-09": "error writing the pid file",
	"obs-10": "error loading the settings file",
	"obs-11": "error from provider on large prompts",
	"obs-12": "the replica refused peers after ERR_CONN_RESET_4471 appeared in the libp2p stream logs today",
	"obs-13": "renamed parseHookPayload so stdin decoding lives beside the schema and its tests",
	"obs-14": "memory grows in compression",
	"obs-15": "memory profile shows a leak",
	"obs-16": "memory limit for the worker pool",
	"obs-17": "memory use of the search index",
	"obs-18": "memory pressure slows the replica",
	"obs-19": "memory snapshot saved to disk",
	"obs-20": "the allocator returned region 0x7f3a9c twice which corrupted one cached observation payload",
	"obs-21": "hook timeout raised to sixty seconds",
	"obs-22": "hook output trimmed before storage",
	"obs-23": "hook retries on busy database",
	"obs-24": "hook logs go to stderr only",
	"obs-25": "hook install writes settings json",
	"obs-26": "hook runs in a fresh process",
	"obs-27": "gossip membership converges in three rounds",
	"obs-28": "tags stripped before the summary prompt",
	"obs-29": "vector blobs stored as little endian floats",
	"obs-30": "search results merged by reciprocal rank fusion",
}

var hybridQueries = []struct{ kind, text, want string }{
	{"synonym", "authentication defect", "obs-01"},
	{"synonym", "sluggish datastore", "obs-03"},
	{"synonym", "purge preferences", "obs-04"},
	{"synonym", "daemon stalled", "obs-05"},
	// The identifier comes last, as typed: FTS also matches it as a prefix, which weighs
	// it above the common word (the other order puts six "error" notes first).
	{"identifier", "error ERR_CONN_RESET_4471", "obs-12"},
	{"identifier", "parseHookPayload hook", "obs-13"},
	{"identifier", "0x7f3a9c memory", "obs-20"},
}

// memVectors is the vector side the node's embedding worker provides: an embedder and an
// exact index over observation IDs.
type memVectors struct {
	emb embed.Embedder
	idx *embed.Index
}

var _ search.Vectors = (*memVectors)(nil)

func (m *memVectors) Nearest(ctx context.Context, text string, k int) ([]embed.Scored, error) {
	v, err := m.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return m.idx.Search(v[0], k), nil
}

func (m *memVectors) Len() int { return m.idx.Len() }

// hybridFixture stores the corpus (one session per record, project "p" for even keys and
// "q" for odd ones) and embeds every stored observation. It returns the searcher, the
// vector side and the fixture key → record ID map.
func hybridFixture(tb testing.TB) (*replica.Replica, *search.Service, *memVectors, map[string]string) {
	tb.Helper()
	ctx := context.Background()
	r := testkit.OpenReplica(tb, "dev-a")
	keys := make([]string, 0, len(hybridCorpus))
	for k := range hybridCorpus {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := &store.Batch{}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i, k := range keys {
		project := "p"
		if i%2 == 1 {
			project = "q"
		}
		b.Observations = append(b.Observations, memory.Observation{SessionID: "s-" + k, Project: project,
			Type: "discovery", Title: hybridCorpus[k], CreatedAt: base + int64(i)*1000})
	}
	res, err := r.Commit(ctx, b)
	if err != nil || len(res.Observations) != len(keys) {
		tb.Fatalf("commit: %v (%d stored)", err, len(res.Observations))
	}
	ids := map[string]string{}
	for i, k := range keys {
		ids[k] = res.Observations[i].ID
	}
	emb := embed.NewHashing(512, hybridSynonyms)
	vs := &memVectors{emb: emb, idx: embed.NewIndex(emb.Dim())}
	miss, err := r.MissingVectors(ctx, emb.ModelID(), 1000)
	if err != nil {
		tb.Fatal(err)
	}
	for _, m := range miss {
		v, _ := emb.Embed(ctx, []string{m.Text})
		if err := vs.idx.Add(m.ID, v[0]); err != nil {
			tb.Fatal(err)
		}
	}
	svc := search.NewService(r, search.Config{})
	return r, svc, vs, ids
}

func rankIn(hits []apitype.Hit, id string) int {
	for i, h := range hits {
		if h.ID == id {
			return i + 1
		}
	}
	return 0
}

func TestHybridBeatsEachSideOnRealFTS(t *testing.T) {
	const cutoff = 5
	ctx := context.Background()
	_, svc, vs, ids := hybridFixture(t)
	svc.SetVectors(vs)

	type metrics struct{ hits, rr float64 }
	got := map[string]*metrics{search.ModeFTS: {}, search.ModeVector: {}, search.ModeHybrid: {}}
	for _, q := range hybridQueries {
		ranks := map[string]int{}
		for mode, m := range got {
			res, err := svc.Search(ctx, apitype.SearchQuery{Text: q.text, Mode: mode, Limit: 20})
			if err != nil {
				t.Fatalf("%s %q: %v", mode, q.text, err)
			}
			if res.Ranking != mode {
				t.Fatalf("%s %q: ranking %q", mode, q.text, res.Ranking)
			}
			r := rankIn(res.Hits, ids[q.want])
			ranks[mode] = r
			if r > 0 && r <= cutoff {
				m.hits++
			}
			if r > 0 {
				m.rr += 1 / float64(r)
			}
		}
		t.Logf("%-10s %-28q fts %2d vector %2d hybrid %2d", q.kind, q.text, ranks[search.ModeFTS], ranks[search.ModeVector], ranks[search.ModeHybrid])
		// The premise of each query kind, so a corpus edit cannot silently void the test.
		switch q.kind {
		case "synonym":
			if ranks[search.ModeFTS] != 0 {
				t.Errorf("%q: FTS found the synonym target at %d", q.text, ranks[search.ModeFTS])
			}
		case "identifier":
			if r := ranks[search.ModeVector]; r >= 1 && r <= cutoff {
				t.Errorf("%q: vectors found the identifier target at %d", q.text, r)
			}
		}
		if r := ranks[search.ModeHybrid]; r < 1 || r > cutoff {
			t.Errorf("%q: hybrid rank %d, want within top %d", q.text, r, cutoff)
		}
	}
	n := float64(len(hybridQueries))
	f, v, h := got[search.ModeFTS], got[search.ModeVector], got[search.ModeHybrid]
	t.Logf("recall@%d fts %.2f vector %.2f hybrid %.2f", cutoff, f.hits/n, v.hits/n, h.hits/n)
	t.Logf("MRR fts %.3f vector %.3f hybrid %.3f", f.rr/n, v.rr/n, h.rr/n)
	if !(h.hits > f.hits && h.hits > v.hits) {
		t.Errorf("recall@%d: hybrid %.0f not above fts %.0f and vector %.0f", cutoff, h.hits, f.hits, v.hits)
	}
	if !(h.rr > f.rr && h.rr > v.rr) {
		t.Errorf("MRR: hybrid %.3f not above fts %.3f and vector %.3f", h.rr/n, f.rr/n, v.rr/n)
	}
}

func TestModeDefaultsAndErrors(t *testing.T) {
	ctx := context.Background()
	_, svc, vs, ids := hybridFixture(t)
	s := svc.Searcher()

	// No vector side: the default is FTS, hybrid falls back to it, vector is refused.
	for _, mode := range []string{"", search.ModeHybrid} {
		res, err := s.Search(ctx, search.Query{Text: "daemon stalled", Mode: mode})
		if err != nil || res.Ranking != search.ModeFTS || len(res.Hits) != 0 {
			t.Fatalf("mode %q without vectors: %+v %v; want FTS and no hits", mode, res, err)
		}
	}
	if _, err := s.Search(ctx, search.Query{Text: "daemon stalled", Mode: search.ModeVector}); !errors.Is(err, search.ErrInvalid) {
		t.Fatalf("vector mode without vectors: %v, want ErrInvalid", err)
	}
	if _, err := s.Search(ctx, search.Query{Text: "x", Mode: "semantic"}); !errors.Is(err, search.ErrInvalid) {
		t.Fatalf("unknown mode: %v, want ErrInvalid", err)
	}

	// An empty index keeps FTS the default.
	empty := &memVectors{emb: vs.emb, idx: embed.NewIndex(vs.emb.Dim())}
	s.SetVectors(empty)
	if res, _ := s.Search(ctx, search.Query{Text: "daemon stalled"}); res.Ranking != search.ModeFTS {
		t.Fatalf("empty index: ranking %q, want fts", res.Ranking)
	}

	s.SetVectors(vs)
	res, err := s.Search(ctx, search.Query{Text: "daemon stalled"})
	if err != nil || res.Ranking != search.ModeHybrid || rankIn(res.Hits, ids["obs-05"]) != 1 {
		t.Fatalf("default with vectors: %+v %v; want hybrid with obs-05 first", res, err)
	}
	// Time order and summary-only scopes stay on FTS by default.
	if res, _ := s.Search(ctx, search.Query{Text: "daemon stalled", Order: search.OrderNewest}); res.Ranking != search.ModeFTS {
		t.Errorf("order newest: ranking %q, want fts", res.Ranking)
	}
	if res, _ := s.Search(ctx, search.Query{Text: "daemon stalled", Type: search.TypeSessions}); res.Ranking != search.ModeFTS {
		t.Errorf("type sessions: ranking %q, want fts", res.Ranking)
	}
	// The timeline's query anchor goes through the same path: a synonym query anchors.
	tl, err := s.Timeline(ctx, apitype.TimelineQuery{Query: "authentication defect", Before: 1, After: 1})
	if err != nil || tl.AnchorID != ids["obs-01"] {
		t.Fatalf("timeline anchor = %q %v, want obs-01 (%s)", tl.AnchorID, err, ids["obs-01"])
	}
}

func TestVectorSideFiltersAndForgottenRows(t *testing.T) {
	ctx := context.Background()
	_, svc, vs, ids := hybridFixture(t)
	svc.SetVectors(vs)
	s := svc.Searcher()

	// obs-05 is in project "p" (even index): a project filter applies to vector hits too.
	res, err := s.Search(ctx, search.Query{Text: "daemon stalled", Mode: search.ModeVector, Project: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) == 0 {
		t.Fatal("no vector hits in project q")
	}
	for _, h := range res.Hits {
		if h.Project != "q" {
			t.Fatalf("vector hit %+v outside project q", h)
		}
	}
	if rankIn(res.Hits, ids["obs-05"]) != 0 {
		t.Fatal("obs-05 of project p returned for project q")
	}
	res, _ = s.Search(ctx, search.Query{Text: "daemon stalled", Mode: search.ModeVector, Project: "p"})
	if rankIn(res.Hits, ids["obs-05"]) != 1 {
		t.Fatalf("project p: obs-05 at %d, want 1: %+v", rankIn(res.Hits, ids["obs-05"]), res.Hits)
	}

	// Forgotten while still in the index (the worker reconciles later): never returned.
	if _, err := svc.Forget(ctx, []string{ids["obs-05"]}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{search.ModeVector, search.ModeHybrid} {
		res, err := s.Search(ctx, search.Query{Text: "daemon stalled", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if rankIn(res.Hits, ids["obs-05"]) != 0 {
			t.Fatalf("%s: forgotten observation returned", mode)
		}
	}

	// Paging a fused list: pages are disjoint and in order.
	all, _ := s.Search(ctx, search.Query{Text: "error memory hook", Limit: 10})
	p2, _ := s.Search(ctx, search.Query{Text: "error memory hook", Limit: 5, Offset: 5})
	if len(all.Hits) != 10 || len(p2.Hits) != 5 {
		t.Fatalf("paging: %d and %d hits", len(all.Hits), len(p2.Hits))
	}
	for i, h := range p2.Hits {
		if h.ID != all.Hits[5+i].ID {
			t.Fatalf("page 2 item %d = %s, want %s", i, h.ID, all.Hits[5+i].ID)
		}
	}
}

func TestRelated(t *testing.T) {
	ctx := context.Background()
	_, svc, vs, ids := hybridFixture(t)
	if hits, err := svc.Related(ctx, "the background daemon stalled again", "p", 3, 0.3); err != nil || len(hits) != 0 {
		t.Fatalf("without vectors: %v %v, want nothing", hits, err)
	}
	svc.SetVectors(vs)
	hits, err := svc.Related(ctx, "the background daemon stalled again", "p", 3, 0.3)
	if err != nil || len(hits) == 0 || hits[0].ID != ids["obs-05"] {
		t.Fatalf("related = %+v %v, want obs-05 first", hits, err)
	}
	if len(hits) > 3 {
		t.Fatalf("limit 3, got %d", len(hits))
	}
	for _, h := range hits {
		if h.Project != "p" || h.Kind != apitype.KindObservation {
			t.Fatalf("related hit %+v outside project p", h)
		}
	}
	// Nothing similar enough: nothing at all, rather than the least bad neighbours.
	if hits, _ := svc.Related(ctx, "quantum chromodynamics lattice", "p", 3, 0.3); len(hits) != 0 {
		t.Fatalf("unrelated prompt: %s", fmt.Sprint(hits))
	}
}

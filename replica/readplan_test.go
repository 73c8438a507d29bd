package replica

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// scanOfRecords is a query plan line that walks a record table (or one of its indexes)
// from end to end: what a request path must never do, since it grows with the database.
// Scans of a bounded subquery's result (c), of the devices table (one row per device), of
// table_counts (one row per table) and
// of the full-text index's doclists are allowed.
var scanOfRecords = regexp.MustCompile(`^SCAN (sessions|prompts|observations|summaries|ops|tombstones|observation_files|supersedes|pins|project_counts|t|o|s|n)\b`)

// planLines explains every read fn makes on r and returns each statement's plan.
func planLines(t *testing.T, r *Replica, fn func(ctx context.Context) error) map[string][]string {
	t.Helper()
	ctx := context.Background()
	type read struct {
		q    string
		args []any
	}
	var reads []read
	r.reads.trace = func(q string, args []any) { reads = append(reads, read{q, args}) }
	defer func() { r.reads.trace = nil }()
	if err := fn(ctx); err != nil {
		t.Fatal(err)
	}
	if len(reads) == 0 {
		t.Fatal("no read traced")
	}
	plans := map[string][]string{}
	for _, rd := range reads {
		rows, err := r.r.QueryContext(ctx, "EXPLAIN QUERY PLAN "+rd.q, rd.args...)
		if err != nil {
			t.Fatalf("explain %s: %v", rd.q, err)
		}
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plans[rd.q] = append(plans[rd.q], detail)
		}
		rows.Close()
	}
	return plans
}

// planFixture is a replica with records in three projects, summaries, prompts, a
// correction and a pin: enough for every read's plan to take its real shape.
func planFixture(t *testing.T) *Replica {
	t.Helper()
	r := openTest(t, "dev-a")
	planFixtureInto(t, r)
	return r
}

// planFixtureInto writes planFixture's records into r.
func planFixtureInto(t *testing.T, r *Replica) {
	t.Helper()
	ctx := context.Background()
	b := &store.ImportBatch{}
	for k := range 7 {
		b.Sessions = append(b.Sessions, memory.Session{ID: fmt.Sprint("s", k), Project: fmt.Sprint("proj-", k%3), StartedAt: 1_790_000_000_000,
			Status: "completed", HLC: 1})
	}
	for i := range 300 {
		at := int64(1_790_000_000_000 + i*1000)
		p := fmt.Sprint("proj-", i%3)
		sid := fmt.Sprint("s", i%7)
		b.Observations = append(b.Observations, memory.Observation{ID: store.ImportID(at, fmt.Sprint("plan:", i)), SessionID: sid, Project: p,
			Type: "change", Title: fmt.Sprint("webhook retry ", i), Narrative: "the handler retries", DiscoveryTokens: 10, CreatedAt: at})
		if i%10 == 0 {
			b.Summaries = append(b.Summaries, memory.Summary{ID: store.ImportID(at+1, fmt.Sprint("plan-sum:", i)), SessionID: sid, Project: p,
				Request: "fix the webhook", CreatedAt: at + 1})
			b.Prompts = append(b.Prompts, memory.Prompt{ID: store.ImportID(at+2, fmt.Sprint("plan-prompt:", i)), SessionID: sid, Project: p,
				PromptNumber: i, Text: "fix the webhook", CreatedAt: at + 2})
		}
	}
	if _, err := r.Import(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := r.Supersede(ctx, b.Observations[0].ID, b.Observations[3].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Pin(ctx, b.Observations[6].ID, true); err != nil {
		t.Fatal(err)
	}
}

// assertNoScan fails when a plan walks a record table.
func assertNoScan(t *testing.T, name string, plans map[string][]string) {
	t.Helper()
	for q, lines := range plans {
		for _, l := range lines {
			if scanOfRecords.MatchString(l) {
				t.Errorf("%s: the plan of\n  %s\nwalks a whole table: %q\n  (plan: %s)", name, strings.Join(strings.Fields(q), " "), l, strings.Join(lines, " | "))
			}
		}
	}
}

// TestRequestPathsReadByIndex: the reads of the session-start context, status, timeline and
// project-filtered search are index lookups or index ranges bounded by their LIMIT — no
// plan walks a record table or one of its indexes end to end, so their cost is O(log n)
// or bounded by their result, whatever the database's size (issue 29: timeline was 942 ms
// and the context 247 ms at 1M observations, each a walk).
func TestRequestPathsReadByIndex(t *testing.T) {
	r := planFixture(t)
	anchor, ok, err := r.HitByID(context.Background(), store.OpObservation, store.ImportID(1_790_000_000_000+150_000, "plan:150"))
	if err != nil || !ok {
		t.Fatalf("anchor: %v %v", ok, err)
	}
	proj := store.SearchFilter{Project: "proj-1"}
	paths := map[string]func(ctx context.Context) error{
		"session-start context": func(ctx context.Context) error {
			if _, err := r.RecentObservations(ctx, "proj-1", 50); err != nil {
				return err
			}
			if _, err := r.RecentSummaries(ctx, "proj-1", 5); err != nil {
				return err
			}
			if _, err := r.PinnedObservations(ctx, "proj-1", 10); err != nil {
				return err
			}
			if _, _, err := r.ProjectStats(ctx, "proj-1"); err != nil {
				return err
			}
			if _, err := r.ProjectSessions(ctx, "proj-1"); err != nil {
				return err
			}
			_, err := r.DeviceNames(ctx)
			return err
		},
		"status": func(ctx context.Context) error {
			_, err := r.Counts(ctx)
			return err
		},
		"timeline": func(ctx context.Context) error {
			for _, kind := range []string{store.OpObservation, store.OpSummary, store.OpPrompt} {
				for _, f := range []store.SearchFilter{{}, proj} {
					for _, before := range []bool{true, false} {
						for _, id := range []string{anchor.ID, ""} {
							if _, err := r.RecordsAround(ctx, kind, f, anchor.Time, id, before, 10); err != nil {
								return err
							}
						}
					}
				}
			}
			return nil
		},
		"project-filtered search": func(ctx context.Context) error {
			for _, kind := range []string{store.OpObservation, store.OpSummary, store.OpPrompt} {
				q := store.WindowQuery{Match: "webhook", Filter: proj, Window: 200, Limit: 20}
				if _, err := r.WindowMatches(ctx, kind, q); err != nil {
					return err
				}
				var words []string // title words score observations only (search.recent)
				if kind == store.OpObservation {
					words = []string{"webhook"}
				}
				if _, err := r.WindowTitles(ctx, kind, q, words, 1); err != nil {
					return err
				}
				if _, err := r.BestMatches(ctx, kind, "webhook", proj, 20); err != nil {
					return err
				}
				if _, err := r.ListRecords(ctx, kind, proj, false, 20); err != nil {
					return err
				}
			}
			return nil
		},
	}
	for name, fn := range paths {
		assertNoScan(t, name, planLines(t, r, fn))
	}
}

// TestProjectFilterIsInTheIndexMatch: a project-filtered search asks the full-text index
// for the project's rows — every MATCH it runs carries the project's key — so FTS5 walks
// the project's matches only; the answers are exactly the project's; no query term, whole
// or as a prefix, ever matches a key.
func TestProjectFilterIsInTheIndexMatch(t *testing.T) {
	r := planFixture(t)
	ctx := context.Background()
	key := `project_key : "` + projectKey("proj-1") + `"`
	proj := store.SearchFilter{Project: "proj-1"}
	for _, kind := range []string{store.OpObservation, store.OpSummary, store.OpPrompt} {
		var matches []string
		r.reads.trace = func(q string, args []any) {
			if !strings.Contains(q, " MATCH ?") {
				return
			}
			for _, a := range args {
				if s, ok := a.(string); ok && strings.Contains(s, "project_key") {
					matches = append(matches, s)
				}
			}
		}
		q := store.WindowQuery{Match: "webhook", Filter: proj, Window: 200, Limit: 500}
		var hits [][]store.IndexHit
		w, err := r.WindowMatches(ctx, kind, q)
		hits = append(hits, w)
		if err != nil {
			t.Fatal(err)
		}
		if w, err = r.WindowTitles(ctx, kind, q, nil, 1); err != nil {
			t.Fatal(err)
		}
		hits = append(hits, w)
		if w, err = r.BestMatches(ctx, kind, "webhook", proj, 500); err != nil {
			t.Fatal(err)
		}
		hits = append(hits, w)
		r.reads.trace = nil
		if len(matches) != 3 {
			t.Fatalf("%s: %d MATCH arguments traced, want 3: %q", kind, len(matches), matches)
		}
		for _, m := range matches {
			if !strings.HasSuffix(m, key) {
				t.Errorf("%s: MATCH %q does not ask the index for the project (%s)", kind, m, key)
			}
		}
		want := map[string]int{store.OpObservation: 100, store.OpSummary: 10, store.OpPrompt: 10}[kind]
		for i, h := range hits {
			if len(h) != want {
				t.Errorf("%s read %d: %d hits, want the project's %d", kind, i, len(h), want)
			}
			for _, x := range h {
				if x.Project != "proj-1" {
					t.Errorf("%s read %d: hit %s of project %q", kind, i, x.ID, x.Project)
				}
			}
		}
		for _, term := range []string{`"` + projectKey("proj-1") + `"`, `"` + projectKey("proj-1")[:3] + `"*`} {
			if n, err := r.CountMatches(ctx, kind, term, 1000); err != nil || n != 0 {
				t.Errorf("%s: the query %s matches %d records (%v): a query term reached the project key", kind, term, n, err)
			}
		}
	}
}

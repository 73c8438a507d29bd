package replica

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// A session's repeated observation is stored once; the same content in another session is
// its own record. The lookup goes through observations_hash, which keys the session and the
// hash's first 4 bytes (migration 19), and checks the whole hash in the row.
func TestDedupIsPerSessionThroughTheHashIndex(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	now := time.Now().UnixMilli()
	same := func(session string, at int64) memory.Observation {
		return memory.Observation{SessionID: session, Project: "p", Type: "change", Title: "leeway for clock skew", Narrative: "same words", CreatedAt: at}
	}
	b := &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: now}, {ID: "s2", Project: "p", StartedAt: now}},
		Observations: []memory.Observation{same("s1", now), same("s2", now)}}
	if _, err := r.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{same("s1", now+5), same("s2", now+5)}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"s1", "s2"} {
		got, err := r.SessionObservations(ctx, s, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("session %s holds %d observations; want the repeated one stored once", s, len(got))
		}
	}
	o := same("s1", now)
	if plan := queryPlan(t, r.ReadDB(), dedupQuery, hashValue(o.HashContent()), "s1"); !strings.Contains(plan, "USING INDEX observations_hash (session_id=? AND <expr>=?)") || strings.Contains(plan, "\n") {
		t.Fatalf("dedup plan = %q; want one search of observations_hash by the session and the hash's prefix", plan)
	}
	var def string
	if err := r.r.QueryRowContext(ctx, "SELECT sql FROM sqlite_schema WHERE name = 'observations_hash'").Scan(&def); err != nil {
		t.Fatal(err)
	}
	// Clustered by session: an import's batch or a snapshot's chunk dirties the pages of its
	// sessions, not a page of the index per row as the hash alone did (migration 18).
	if !strings.HasSuffix(def, "ON observations(session_id, substr(content_hash, 1, 4))") {
		t.Fatalf("observations_hash = %q; want the session, then the hash's first bytes", def)
	}
}

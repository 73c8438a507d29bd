package replica

import (
	"context"
	"fmt"
	"github.com/memnode/memnode/store"
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/memory"
)

// TestReadStatementCacheFull: once the cache holds maxReadStmts shapes, new shapes run
// unprepared and the cached ones stay (none is closed under a concurrent user).
func TestReadStatementCacheFull(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memnode.db"), Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s", Project: "p",
		Type: "change", Title: "webhook retries", CreatedAt: 1}}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; len(r.reads.stmts) < maxReadStmts; i++ {
		var n int
		if err := r.reads.queryRow(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
			t.Fatalf("filler %d: %d %v", i, n, err)
		}
	}
	first := r.reads.stmts["SELECT 0"]
	hits, err := r.WindowMatches(ctx, store.OpObservation, store.WindowQuery{Match: `"webhook"`, Filter: store.SearchFilter{Project: "p"}, Window: 10, Limit: 10})
	if err != nil || len(hits) != 1 {
		t.Fatalf("index read with a full cache: %+v %v", hits, err)
	}
	if c, err := r.CountMatches(ctx, store.OpObservation, `"webhook"`, 10); err != nil || c != 1 {
		t.Fatalf("count with a full cache: %d %v", c, err)
	}
	if len(r.reads.stmts) != maxReadStmts || r.reads.stmts["SELECT 0"] != first {
		t.Fatalf("cache changed when full: %d statements", len(r.reads.stmts))
	}
}

// TestContextReadsArePrepared: the session-start context's reads (and get's) run through
// the read statement cache: a second context prepares no statement, and the first left
// one per read in the cache (parsing them cost more than running them).
func TestContextReadsArePrepared(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memnode.db"), Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := &store.Batch{Observations: []memory.Observation{{SessionID: "s", Project: "p", Type: "change", Title: "webhook retries", CreatedAt: 1}}}
	res, err := r.Commit(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	id := res.Observations[0].ID
	read := func() {
		t.Helper()
		obs, err := r.RecentObservations(ctx, "p", 50)
		if err != nil || len(obs) != 1 {
			t.Fatalf("recent observations: %d %v", len(obs), err)
		}
		if _, err := r.RecentSummaries(ctx, "p", 3); err != nil {
			t.Fatal(err)
		}
		if n, _, err := r.ProjectStats(ctx, "p"); err != nil || n != 1 {
			t.Fatalf("project stats: %d %v", n, err)
		}
		if _, err := r.DeviceNames(ctx); err != nil {
			t.Fatal(err)
		}
		if short, err := r.ShortIDs(ctx, []string{id}); err != nil || short[id] == "" {
			t.Fatalf("short ids: %v %v", short, err)
		}
		if _, ok, err := r.Lookup(ctx, id); err != nil || !ok {
			t.Fatalf("lookup: %v %v", ok, err)
		}
	}
	read()
	r.reads.mu.Lock()
	first := len(r.reads.stmts)
	r.reads.mu.Unlock()
	if first < 5 {
		t.Fatalf("%d statements cached after a context, want one per read", first)
	}
	read()
	r.reads.mu.Lock()
	defer r.reads.mu.Unlock()
	if len(r.reads.stmts) != first {
		t.Fatalf("a second context prepared %d more statements", len(r.reads.stmts)-first)
	}
}

// TestOpsSinceRebuildsPayloadsThroughOneStatement: serving observation ops kept in their
// rows rebuilds each payload with the read cache's prepared statement, not a statement
// parsed again per op (a sixth of a 10k-op catch-up's CPU went to parsing it), and the
// rebuilt payloads are the ops' own.
func TestOpsSinceRebuildsPayloadsThroughOneStatement(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memnode.db"), Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b := &store.Batch{}
	for i := range 20 {
		b.Observations = append(b.Observations, memory.Observation{SessionID: "s", Project: "p", Type: "change", Title: fmt.Sprint("op ", i), CreatedAt: int64(i + 1)})
	}
	if _, err := r.Commit(ctx, b); err != nil {
		t.Fatal(err)
	}
	serve := func() int {
		t.Helper()
		ops, err := r.OpsSince(ctx, "dev-a", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, op := range ops {
			if op.Kind == store.OpObservation {
				if len(op.Payload) == 0 {
					t.Fatalf("op %d served without its payload", op.Seq)
				}
				n++
			}
		}
		return n
	}
	if n := serve(); n != 20 {
		t.Fatalf("served %d observation ops, want 20", n)
	}
	r.reads.mu.Lock()
	first := len(r.reads.stmts)
	r.reads.mu.Unlock()
	if first == 0 {
		t.Fatal("OpsSince rebuilt payloads without the read statement cache")
	}
	serve()
	r.reads.mu.Lock()
	defer r.reads.mu.Unlock()
	if len(r.reads.stmts) != first {
		t.Fatalf("a second OpsSince prepared %d more statements", len(r.reads.stmts)-first)
	}
}

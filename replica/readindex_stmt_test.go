package replica

import (
	"context"
	"fmt"
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
	if _, err := r.Commit(ctx, &Batch{Observations: []memory.Observation{{SessionID: "s", Project: "p",
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
	hits, err := r.WindowMatches(ctx, OpObservation, WindowQuery{Match: `"webhook"`, Filter: SearchFilter{Project: "p"}, Window: 10, Limit: 10})
	if err != nil || len(hits) != 1 {
		t.Fatalf("index read with a full cache: %+v %v", hits, err)
	}
	if c, err := r.CountMatches(ctx, OpObservation, `"webhook"`, 10); err != nil || c != 1 {
		t.Fatalf("count with a full cache: %d %v", c, err)
	}
	if len(r.reads.stmts) != maxReadStmts || r.reads.stmts["SELECT 0"] != first {
		t.Fatalf("cache changed when full: %d statements", len(r.reads.stmts))
	}
}

package search

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// TestStatementCacheFull: once the cache holds maxStmts shapes, new shapes run
// unprepared and the cached ones stay (none is closed under a concurrent user).
func TestStatementCacheFull(t *testing.T) {
	ctx := context.Background()
	r, err := replica.Open(ctx, replica.Config{Path: filepath.Join(t.TempDir(), "memnode.db"), Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Commit(ctx, &replica.Batch{Observations: []memory.Observation{{SessionID: "s", Project: "p",
		Type: "change", Title: "webhook retries", CreatedAt: 1}}}); err != nil {
		t.Fatal(err)
	}
	s := New(r.ReadDB(), Config{})
	defer s.Close()
	for i := 0; len(s.stmts) < maxStmts; i++ {
		var n int
		if err := s.queryRow(ctx, fmt.Sprintf("SELECT %d", i)).Scan(&n); err != nil || n != i {
			t.Fatalf("filler %d: %d %v", i, n, err)
		}
	}
	first := s.stmts["SELECT 0"]
	res, err := s.Search(ctx, Query{Text: "webhook", Project: "p"})
	if err != nil || len(res.Hits) != 1 {
		t.Fatalf("search with a full cache: %+v %v", res, err)
	}
	if len(s.stmts) != maxStmts || s.stmts["SELECT 0"] != first {
		t.Fatalf("cache changed when full: %d statements", len(s.stmts))
	}
}

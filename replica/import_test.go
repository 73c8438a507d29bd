package replica

import (
	"context"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// TestImportSkipsTombstonedRecords: an imported record is skipped when its own ID or its
// session's carries a tombstone, for every kind, whichever other records share its batch
// (the batch's tombstones are read once, before its records).
func TestImportSkipsTombstonedRecords(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	now := time.Now().UnixMilli()
	id := func(k string) string { return store.ImportID(now, k) }
	if _, err := r.Import(ctx, &store.ImportBatch{Tombstones: []string{"dead-s", id("dead-p"), id("dead-o"), id("dead-m")}}); err != nil {
		t.Fatal(err)
	}
	b := &store.ImportBatch{
		Sessions: []memory.Session{{ID: "dead-s", Project: "p", StartedAt: now}, {ID: "live-s", Project: "p", StartedAt: now}},
		Prompts: []memory.Prompt{
			{ID: id("p1"), SessionID: "dead-s", Project: "p", Text: "in a forgotten session", CreatedAt: now},
			{ID: id("dead-p"), SessionID: "live-s", Project: "p", Text: "forgotten itself", CreatedAt: now},
			{ID: id("p2"), SessionID: "live-s", Project: "p", Text: "kept", CreatedAt: now},
		},
		Observations: []memory.Observation{
			{ID: id("o1"), SessionID: "dead-s", Project: "p", Type: "change", Title: "in a forgotten session", CreatedAt: now},
			{ID: id("dead-o"), SessionID: "live-s", Project: "p", Type: "change", Title: "forgotten itself", CreatedAt: now},
			{ID: id("o2"), SessionID: "live-s", Project: "p", Type: "change", Title: "kept", CreatedAt: now},
		},
		Summaries: []memory.Summary{
			{ID: id("m1"), SessionID: "dead-s", Project: "p", Request: "in a forgotten session", CreatedAt: now},
			{ID: id("dead-m"), SessionID: "live-s", Project: "p", Request: "forgotten itself", CreatedAt: now},
			{ID: id("m2"), SessionID: "live-s", Project: "p", Request: "kept", CreatedAt: now},
		},
	}
	res, err := r.Import(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	want := store.ImportResult{Sessions: 1, Prompts: 1, Observations: 1, Summaries: 1, Skipped: 7}
	if res != want {
		t.Fatalf("import = %+v, want %+v", res, want)
	}
	got, err := r.GetObservations(ctx, []string{id("o1"), id("dead-o"), id("o2")})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != id("o2") {
		t.Fatalf("stored observations = %+v, want only %s", got, id("o2"))
	}
}

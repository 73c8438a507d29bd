package replica

import (
	"context"
	"os"
	"strconv"
	"strings"
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

// TestImportCheckpointsLate: an import's transactions leave their pages in the WAL up to
// importCheckpoint pages (the database file does not grow, though the import wrote more
// than SQLite's default 1,000 pages), and the next commit of a hook's records checkpoints
// them at the default interval again.
func TestImportCheckpointsLate(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	path := r.cfg.Path
	size := func() int64 {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	now := time.Now().UnixMilli()
	var obs []memory.Observation
	for i := range 1500 {
		k := strconv.Itoa(i)
		obs = append(obs, memory.Observation{ID: store.ImportID(now, k), SessionID: "s", Project: "p", Type: "change",
			Title: "record " + k, Narrative: strings.Repeat("narrative "+k+" ", 300), CreatedAt: now})
	}
	if _, err := r.Import(ctx, &store.ImportBatch{Observations: obs}); err != nil {
		t.Fatal(err)
	}
	wal, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if frames := wal.Size() / 4096; frames <= walCheckpoint {
		t.Fatalf("the import wrote %d pages, want more than %d for the test to mean anything", frames, walCheckpoint)
	}
	if got := size(); got != before {
		t.Fatalf("the database file grew from %d to %d bytes at the import's commit: its WAL was checkpointed", before, got)
	}
	if _, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s2", Project: "p", Type: "change", Title: "hook", CreatedAt: now}}}); err != nil {
		t.Fatal(err)
	}
	if got := size(); got <= before {
		t.Fatalf("the database file stayed at %d bytes after a hook's commit: the import's WAL was not checkpointed", got)
	}
}

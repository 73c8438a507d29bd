package replica

import (
	"context"
	"errors"
	"github.com/memnode/memnode/store"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

func TestOversizedRecordIsRefusedWhereItEnters(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 5 MiB records through Commit and Import (make test runs it)")
	}
	ctx := context.Background()
	r := openTest(t, "dev-a")
	now := time.Now().UnixMilli()
	huge := strings.Repeat("n", 5<<20)
	_, err := r.Commit(ctx, &store.Batch{
		Observations: []memory.Observation{{SessionID: "s1", Project: "demo", Type: "note", Title: "small", CreatedAt: now},
			{SessionID: "s1", Project: "demo", Type: "note", Title: "huge", Narrative: huge, CreatedAt: now}},
	})
	if !errors.Is(err, memory.ErrRecordTooLarge) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("Commit of a 5 MiB observation: %v, want ErrRecordTooLarge", err)
	}
	_, err = r.Import(ctx, &store.ImportBatch{Observations: []memory.Observation{{ID: store.ImportID(now, "k"), SessionID: "s1", Project: "demo", Title: "t", Narrative: huge, CreatedAt: now}}})
	if !errors.Is(err, memory.ErrRecordTooLarge) {
		t.Fatalf("Import of a 5 MiB observation: %v, want ErrRecordTooLarge", err)
	}
	vv, err := r.VersionVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if vv["dev-a"] != 0 {
		t.Fatalf("a refused batch left ops: vv = %v", vv)
	}
	var rows int
	if err := r.ReadDB().QueryRowContext(ctx, "SELECT COUNT(*) FROM observations").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("a refused batch left %d observations", rows)
	}
}

func TestClipOversizedFitsEveryRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 1-4 MiB records clipped and committed (make test runs it)")
	}
	ctx := context.Background()
	r := openTest(t, "dev-a")
	now := time.Now().UnixMilli()
	// "<" is escaped by encoding/json into six bytes: the clip must measure the JSON.
	escapes := strings.Repeat("<", 2<<20)
	b := &store.Batch{
		Prompts:      []memory.Prompt{{SessionID: "s1", Project: "demo", PromptNumber: 1, Text: strings.Repeat("é", 1<<20), CreatedAt: now}},
		Observations: []memory.Observation{{SessionID: "s1", Project: "demo", Type: "change", Title: "t", Narrative: escapes, Facts: []string{strings.Repeat("f", 3<<20)}, CreatedAt: now}},
		Summaries:    []memory.Summary{{SessionID: "s1", Project: "demo", Learned: "kept", Notes: strings.Repeat("s", 4<<20), CreatedAt: now}},
	}
	small := memory.Observation{SessionID: "s1", Project: "demo", Type: "change", Title: "small one", CreatedAt: now}
	b.Observations = append(b.Observations, small)
	if k := b.ClipOversized(); k != 3 {
		t.Fatalf("ClipOversized clipped %d records, want 3", k)
	}
	if b.Observations[1].Title != "small one" || b.Summaries[0].Learned != "kept" {
		t.Fatal("ClipOversized changed what fits")
	}
	if !strings.HasSuffix(b.Prompts[0].Text, store.ClipMarker) || !strings.HasPrefix(b.Prompts[0].Text, "éé") {
		t.Fatalf("clipped prompt does not keep its start and say it was clipped: %q…", b.Prompts[0].Text[:8])
	}
	if _, err := r.Commit(ctx, b); err != nil {
		t.Fatalf("Commit after ClipOversized: %v", err)
	}
	ops, err := r.OpsSince(ctx, "dev-a", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 4 {
		t.Fatalf("%d ops, want 4", len(ops))
	}
	for _, op := range ops {
		if len(op.Payload) > MaxRecordSize {
			t.Errorf("%s op: %d bytes (limit %d)", op.Kind, len(op.Payload), MaxRecordSize)
		}
	}
}

package replica

import (
	"bytes"
	"context"
	"github.com/memnode/memnode/store"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

func TestVectorsLifecycle(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	now := time.Now().UnixMilli()
	res, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{
		{SessionID: "s1", Project: "p", Type: "bugfix", Title: "Fix login", Subtitle: "cookie expiry", Facts: []string{"cookie lived 1h", "now 24h"}, Narrative: "The session cookie expired early.", CreatedAt: now},
		{SessionID: "s1", Project: "p", Type: "change", Title: "Dark mode", CreatedAt: now + 1},
		{SessionID: "s2", Project: "p", Type: "change", Title: "Other session", CreatedAt: now + 2},
	}})
	if err != nil || len(res.Observations) != 3 {
		t.Fatalf("commit: %v %+v", err, res)
	}
	miss, err := r.MissingVectors(ctx, "m1", 10)
	if err != nil || len(miss) != 3 {
		t.Fatalf("missing = %d %v, want 3", len(miss), err)
	}
	if miss[0].ID != res.Observations[2].ID {
		t.Errorf("missing not newest first: %s", miss[0].ID)
	}
	login := miss[2]
	for _, want := range []string{"Fix login", "cookie expiry", "now 24h", "expired early"} {
		if !strings.Contains(login.Text, want) {
			t.Errorf("embedding text %q lacks %q", login.Text, want)
		}
	}
	var rows []store.VectorRow
	for i, m := range miss {
		rows = append(rows, store.VectorRow{RowID: m.RowID, ID: m.ID, Dim: 1, Blob: []byte{byte(i), 0, 0, 0}})
	}
	rows[1].Dim, rows[1].Blob = 0, []byte{} // the model failed on this one
	// A stale row: rowid and ID disagree (the observation was forgotten and the rowid reused).
	rows = append(rows, store.VectorRow{RowID: miss[0].RowID, ID: "someone-else", Dim: 1, Blob: []byte{9, 9, 9, 9}})
	before, _ := r.Counts(ctx)
	n, err := r.PutVectors(ctx, "m1", rows)
	if err != nil || n != 3 {
		t.Fatalf("put = %d %v, want 3", n, err)
	}
	if after, _ := r.Counts(ctx); after.Ops != before.Ops {
		t.Errorf("PutVectors appended %d ops; vectors must never replicate", after.Ops-before.Ops)
	}
	st, err := r.VectorCounts(ctx, "m1")
	if err != nil || st != (store.VectorStats{Total: 3, Embedded: 3, Failed: 1}) {
		t.Fatalf("counts = %+v %v", st, err)
	}
	if miss, _ := r.MissingVectors(ctx, "m1", 10); len(miss) != 0 {
		t.Fatalf("still missing %d", len(miss))
	}
	loaded := map[string][]byte{}
	if err := r.LoadVectors(ctx, "m1", func(id string, b []byte) error { loaded[id] = bytes.Clone(b); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 2 || !bytes.Equal(loaded[miss[0].ID], []byte{0, 0, 0, 0}) {
		t.Fatalf("loaded %v (the failed row must be left out, the stale put ignored)", loaded)
	}

	// A model change: every row counts as missing for the new model, and re-embedding
	// replaces the old model's rows.
	if miss, _ := r.MissingVectors(ctx, "m2", 10); len(miss) != 3 {
		t.Fatalf("missing for m2 = %d, want 3", len(miss))
	}
	if _, err := r.PutVectors(ctx, "m2", []store.VectorRow{{RowID: miss[0].RowID, ID: miss[0].ID, Dim: 1, Blob: []byte{1, 2, 3, 4}}}); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.VectorCounts(ctx, "m1"); st.Embedded != 2 {
		t.Errorf("m1 rows = %d, want 2 after one was replaced", st.Embedded)
	}

	// Forgetting an observation (here: its whole session) removes its vector.
	if _, err := r.Forget(ctx, []string{"s1"}); err != nil {
		t.Fatal(err)
	}
	st, _ = r.VectorCounts(ctx, "m1")
	st2, _ := r.VectorCounts(ctx, "m2")
	if st.Total != 1 || st.Embedded+st2.Embedded != 1 {
		t.Fatalf("after forget: m1 %+v, m2 %+v; want one observation and one vector left", st, st2)
	}
	var orphans int
	if err := r.ReadDB().QueryRow("SELECT COUNT(*) FROM vectors WHERE obs_rowid NOT IN (SELECT rowid FROM observations)").Scan(&orphans); err != nil || orphans != 0 {
		t.Fatalf("orphan vectors = %d %v", orphans, err)
	}
	dump, _ := r.CanonicalDump(ctx)
	if strings.Contains(dump, "vectors") {
		t.Errorf("canonical dump mentions vectors:\n%s", dump)
	}
}

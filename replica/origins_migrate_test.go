package replica

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// opsAtV15 turns the op-log back into schema v15's: a WITHOUT ROWID table keyed by
// (origin, seq) holding each origin's name, no origins table, the triggers on it as
// migrations 11 and 14 made them. Tests that rewind to an older schema run it first.
var opsAtV15 = []string{
	`CREATE TABLE ops_v15 (origin TEXT NOT NULL, seq INTEGER NOT NULL, hlc INTEGER NOT NULL, kind TEXT NOT NULL,
		record_id TEXT NOT NULL, payload BLOB, inrow INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (origin, seq)) WITHOUT ROWID`,
	"INSERT INTO ops_v15 SELECT g.origin, o.seq, o.hlc, o.kind, o.record_id, o.payload, o.inrow FROM ops o JOIN origins g ON g.id = o.origin_id",
	"DROP TABLE ops",
	"DROP TABLE origins",
	"ALTER TABLE ops_v15 RENAME TO ops",
	"CREATE INDEX ops_record ON ops(record_id)",
	"CREATE TRIGGER counts_ops_ai AFTER INSERT ON ops BEGIN UPDATE table_counts SET n = n + 1 WHERE name = 'ops'; END",
	"CREATE TRIGGER counts_ops_ad AFTER DELETE ON ops BEGIN UPDATE table_counts SET n = n - 1 WHERE name = 'ops'; END",
	"CREATE TRIGGER ops_hlc_max AFTER INSERT ON ops WHEN NEW.hlc > (SELECT hlc FROM hlc_max WHERE id = 1) BEGIN UPDATE hlc_max SET hlc = NEW.hlc WHERE id = 1; END",
}

// TestOpsByOriginIDMigrationKeepsTheOpLog: a database of schema v15 (ops keyed by the
// origin's name, ops of two origins, an observation op kept in its row, a forget, a
// compacted-away seq) is migrated to numbered origins: every op comes back the same from
// OpsSince and the snapshot, the dump and the counts are unchanged, the search index is
// intact, and the triggers on ops (counts, hlc_max) work on the new table.
func TestOpsByOriginIDMigrationKeepsTheOpLog(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	res, err := r.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: now}},
		Observations: []memory.Observation{
			{SessionID: "s1", Project: "p", Type: "change", Title: "leeway for clock skew", CreatedAt: now},
			{SessionID: "s1", Project: "p", Type: "bugfix", Title: "token refresh race", CreatedAt: now + 1}}})
	if err != nil || len(res.Observations) != 2 {
		t.Fatalf("commit: %v", err)
	}
	if _, err := r.Forget(ctx, []string{res.Observations[1].ID}); err != nil {
		t.Fatal(err)
	}
	hlc := uint64(now) << hlcLogicalBits
	if _, err := r.ApplyOps(ctx, []store.Op{
		{Origin: "dev-b", Seq: 1, HLC: hlc, Kind: store.OpDevice, RecordID: "device:dev-b", Payload: []byte(`{"origin":"dev-b","name":"b"}`)},
		{Origin: "dev-b", Seq: 2, Kind: store.OpCompacted},
		{Origin: "dev-b", Seq: 3, HLC: hlc + 1, Kind: store.OpDevice, RecordID: "device:dev-b", Payload: []byte(`{"origin":"dev-b","name":"bee"}`)},
	}); err != nil {
		t.Fatal(err)
	}
	type state struct {
		a, b     []store.Op
		dump     string
		snapshot []string
		counts   int64
	}
	read := func() state {
		t.Helper()
		var s state
		s.a, s.b = opsOf(t, r, "dev-a"), opsOf(t, r, "dev-b")
		if s.dump, err = r.CanonicalDump(ctx); err != nil {
			t.Fatal(err)
		}
		err := r.Snapshot(ctx, store.SnapshotCursor{}, 1<<20, func(c store.SnapshotChunk) error {
			if c.Table == "ops" {
				for _, row := range c.Rows {
					s.snapshot = append(s.snapshot, fmt.Sprintf("%q", row))
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := r.ReadDB().QueryRow("SELECT (SELECT n FROM table_counts WHERE name = 'ops'), (SELECT COUNT(*) FROM ops)").Scan(&s.counts, &n); err != nil || s.counts != n {
			t.Fatalf("ops counted %d, held %d (%v)", s.counts, n, err)
		}
		return s
	}
	want := read()
	if len(want.a) != 4 || len(want.b) != 3 || want.b[1].Kind != store.OpCompacted || len(want.snapshot) != 6 || inRowCount(t, r) != 1 {
		t.Fatalf("before: %d ops of dev-a, %d of dev-b, %d in the snapshot, %d in row", len(want.a), len(want.b), len(want.snapshot), inRowCount(t, r))
	}
	for _, q := range append(slices.Clone(opsAtV15), "DELETE FROM schema_version WHERE version >= 16") {
		if _, err := r.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var named int
	if err := r.ReadDB().QueryRow("SELECT COUNT(*) FROM ops WHERE origin IN ('dev-a', 'dev-b')").Scan(&named); err != nil || named != 6 {
		t.Fatalf("v15 op-log: %d ops naming their origin (%v)", named, err)
	}
	r.Close()
	if r, err = Open(ctx, Config{Path: path, Origin: "dev-a"}); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var cols []string
	rows, err := r.ReadDB().Query("SELECT name FROM pragma_table_info('ops') ORDER BY cid")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	if !slices.Equal(cols, []string{"origin_id", "seq", "hlc", "kind", "record_id", "payload", "inrow"}) {
		t.Fatalf("ops columns after the migration: %q", cols)
	}
	got := read()
	if !slices.EqualFunc(got.a, want.a, opEqual) || !slices.EqualFunc(got.b, want.b, opEqual) {
		t.Fatalf("ops after the migration:\n%+v\n%+v\nwant\n%+v\n%+v", got.a, got.b, want.a, want.b)
	}
	if got.dump != want.dump || !slices.Equal(got.snapshot, want.snapshot) || got.counts != want.counts {
		t.Fatalf("after the migration: dump equal %v, snapshot %q (want %q), counts %d (want %d)",
			got.dump == want.dump, got.snapshot, want.snapshot, got.counts, want.counts)
	}
	if _, err := r.w.ExecContext(ctx, `INSERT INTO observations_fts(observations_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("search index after the migration: %v", err)
	}
	// The triggers work on the new table: another origin's op is counted and raises hlc_max.
	ahead := hlc + 1<<hlcLogicalBits
	if _, err := r.ApplyOps(ctx, []store.Op{{Origin: "dev-c", Seq: 1, HLC: ahead, Kind: store.OpDevice, RecordID: "device:dev-c",
		Payload: []byte(`{"origin":"dev-c","name":"c"}`)}}); err != nil {
		t.Fatal(err)
	}
	if after := read(); after.counts != want.counts+1 || len(opsOf(t, r, "dev-c")) != 1 {
		t.Fatalf("an op after the migration: counted %d (want %d)", after.counts, want.counts+1)
	}
	if kept, scanned := keptMax(t, r); kept < int64(ahead) || scanned != kept {
		t.Fatalf("hlc_max %d, op-log max %d, want %d", kept, scanned, ahead)
	}
}

func opEqual(a, b store.Op) bool {
	return a.Origin == b.Origin && a.Seq == b.Seq && a.HLC == b.HLC && a.Kind == b.Kind && a.RecordID == b.RecordID && string(a.Payload) == string(b.Payload)
}

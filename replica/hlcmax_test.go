package replica

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// queryPlan is EXPLAIN QUERY PLAN's details for query, one line per step.
func queryPlan(t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.Query("EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	return strings.Join(steps, "\n")
}

// TestLoadClockReadsOneRow (issue 29): the clock's start is one primary-key lookup of the
// kept stamp (rowid=?), not a walk of the op-log like the MAX over ops it replaces (whose
// plan names no constraint: every op is read).
func TestLoadClockReadsOneRow(t *testing.T) {
	r := openTest(t, "dev-a")
	plan := queryPlan(t, r.ReadDB(), loadHLCMax)
	if !strings.Contains(plan, "SEARCH hlc_max USING INTEGER PRIMARY KEY (rowid=?)") || strings.Contains(plan, "SCAN") {
		t.Fatalf("load the clock: plan\n%s\nwant one primary-key lookup", plan)
	}
	if old := queryPlan(t, r.ReadDB(), "SELECT MAX(hlc) FROM ops WHERE hlc BETWEEN 0 AND ?", 1); strings.Contains(old, "=?") {
		t.Fatalf("the op-log scan has become a lookup (plan %q): revisit hlc_max", old)
	}
}

// keptMax is hlc_max's row and the op-log's maximum.
func keptMax(t *testing.T, r *Replica) (kept, scanned int64) {
	t.Helper()
	if err := r.ReadDB().QueryRow(loadHLCMax).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadDB().QueryRow("SELECT COALESCE(MAX(hlc), 0) FROM ops").Scan(&scanned); err != nil {
		t.Fatal(err)
	}
	return kept, scanned
}

// TestHLCMaxKeptOnEveryWrite: every path that adds ops (a local commit, ops applied from
// another device, an import) keeps hlc_max at the op-log's maximum in the same transaction;
// a reopened replica's clock resumes past it; the row never moves back when ops go.
func TestHLCMaxKeptOnEveryWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	check := func(step string) int64 {
		t.Helper()
		kept, scanned := keptMax(t, r)
		if kept != scanned || kept == 0 {
			t.Fatalf("after %s: hlc_max %d, op-log max %d", step, kept, scanned)
		}
		return kept
	}
	now := time.Now()
	if _, err := r.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: now.UnixMilli()}},
		Observations: []memory.Observation{{SessionID: "s1", Project: "p", Type: "bugfix", Title: "fix", CreatedAt: now.UnixMilli()}}}); err != nil {
		t.Fatal(err)
	}
	check("a commit")
	ahead := uint64(now.Add(time.Minute).UnixMilli()) << hlcLogicalBits // within the clock bound
	if _, err := r.ApplyOps(ctx, []store.Op{{Origin: "dev-b", Seq: 1, HLC: ahead, Kind: store.OpDevice, RecordID: "device:dev-b",
		Payload: []byte(`{"origin":"dev-b","name":"b"}`)}}); err != nil {
		t.Fatal(err)
	}
	if got := check("ops from another device"); got != int64(ahead) {
		t.Fatalf("hlc_max %d, want the applied op's %d", got, ahead)
	}
	if _, err := r.Import(ctx, &store.ImportBatch{Observations: []memory.Observation{{ID: store.ImportID(now.UnixMilli(), "k"),
		SessionID: "s2", Project: "p", Title: "imported", CreatedAt: now.UnixMilli()}}}); err != nil {
		t.Fatal(err)
	}
	check("an import")
	// The op that held the maximum goes (as a compaction or a cut would take it): the kept
	// stamp stays, so the clock never issues it again.
	if _, err := r.w.Exec("DELETE FROM ops WHERE origin_id = (SELECT id FROM origins WHERE origin = 'dev-b')"); err != nil {
		t.Fatal(err)
	}
	if kept, _ := keptMax(t, r); kept < int64(ahead) {
		t.Fatalf("hlc_max moved back to %d after its op went", kept)
	}
	r.Close()
	r, err = Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if last := r.clock.Last(); last < ahead {
		t.Fatalf("reopened clock at %d, behind the kept stamp %d", last, ahead)
	}
	if next := r.clock.Now(); next <= ahead {
		t.Fatalf("the next stamp %d is not after the kept %d", next, ahead)
	}
}

// TestHLCMaxFilledOnceFromAnOlderDatabase: a database migrated to 0014 has no kept stamp
// yet; the first open fills it from the op-log (one scan), and the next one reads it.
func TestHLCMaxFilledOnceFromAnOlderDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetDeviceName(ctx, "dev-a", "laptop"); err != nil {
		t.Fatal(err)
	}
	// As migration 0014 leaves an older database: the row unfilled.
	if _, err := r.w.Exec("UPDATE hlc_max SET hlc = NULL"); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r, err = Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	kept, scanned := keptMax(t, r)
	if kept != scanned || kept == 0 {
		t.Fatalf("hlc_max %d after the first open, op-log max %d", kept, scanned)
	}
	if r.clock.Last() < uint64(scanned) {
		t.Fatalf("clock %d behind the op-log's %d", r.clock.Last(), scanned)
	}
}

// TestWarmShortIDsLoadsTheIndex: the node reads the short-ID index ahead after ready, so the
// first context does not pay the read of every key (3.9 s at 1M, load 25).
func TestWarmShortIDsLoadsTheIndex(t *testing.T) {
	r := openTest(t, "dev-a")
	if r.shorts.loaded {
		t.Fatal("the index is loaded at open: the test shows nothing")
	}
	if err := r.WarmShortIDs(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !r.shorts.loaded {
		t.Fatal("WarmShortIDs left the index unread")
	}
}

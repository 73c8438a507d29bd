package replica

import (
	"context"
	"fmt"
	"github.com/memnode/memnode/store"
	"maps"
	"strings"
	"testing"

	"github.com/memnode/memnode/memory"
)

// planCommit needs no database: the same batch and facts always mean the same records and
// ops, which is what lets a backend without interactive transactions make the same plan.
func TestPlanCommitIsPureMeaning(t *testing.T) {
	obs := func(session, title string) memory.Observation {
		return memory.Observation{SessionID: session, Project: "demo", Type: "discovery", Title: title, CreatedAt: 1}
	}
	stored := obs("s1", "already stored")
	b := &store.Batch{
		Sessions:     []memory.Session{{ID: "s1", Project: "demo"}, {ID: "gone", Project: "demo"}},
		Prompts:      []memory.Prompt{{SessionID: "s1", Project: "demo", Text: "p"}, {SessionID: "gone", Project: "demo", Text: "hidden"}},
		Observations: []memory.Observation{obs("s1", "new"), obs("s1", "new"), stored, obs("gone", "hidden")},
		Summaries:    []memory.Summary{{SessionID: "gone", Project: "demo"}, {SessionID: "s1", Project: "demo", Request: "r"}},
	}
	facts := commitFacts{
		tombstoned: map[string]bool{"gone": true},
		stored:     map[string]bool{contentKey("s1", stored.HashContent()): true},
	}
	plan := func() commitPlan {
		var hlc uint64 = 1 << 20
		return planCommit(b, facts, func() uint64 { hlc++; return hlc }, "dev-a")
	}
	p := plan()
	if len(p.sessions) != 1 || p.sessions[0].s.ID != "s1" || p.sessions[0].s.Status != "active" {
		t.Fatalf("sessions = %+v; want s1 only, active by default", p.sessions)
	}
	if len(p.prompts) != 1 || len(p.observations) != 1 || len(p.summaries) != 1 || p.duplicates != 2 {
		t.Fatalf("plan = %d prompts, %d observations (%d duplicates), %d summaries; want 1, 1 (2), 1",
			len(p.prompts), len(p.observations), p.duplicates, len(p.summaries))
	}
	var ops []plannedOp
	for _, s := range p.sessions {
		ops = append(ops, s.op)
	}
	ops = append(ops, p.prompts[0].op, p.observations[0].op, p.summaries[0].op)
	ids := []string{"s1", p.prompts[0].p.ID, p.observations[0].o.ID, p.summaries[0].s.ID}
	kinds := []string{store.OpSession, store.OpPrompt, store.OpObservation, store.OpSummary}
	for i, op := range ops {
		if op.kind != kinds[i] || op.recordID != ids[i] || op.recordID == "" || len(op.payload) == 0 {
			t.Fatalf("op %d = %+v; want %s of %s with a payload", i, op, kinds[i], ids[i])
		}
		if i > 0 && op.hlc <= ops[i-1].hlc {
			t.Fatalf("stamps not increasing in op order: %d then %d", ops[i-1].hlc, op.hlc)
		}
	}
	if o := p.observations[0].o; o.Origin != "dev-a" || o.ContentHash == "" || o.ID != store.NewID(o.HLC, "dev-a") {
		t.Fatalf("observation not stamped: %+v", o)
	}
	// Same inputs, same clock: the same plan, byte for byte.
	again := plan()
	if again.observations[0].o.ID != p.observations[0].o.ID || string(again.observations[0].op.payload) != string(p.observations[0].op.payload) {
		t.Fatal("planning the same batch twice gave different records")
	}
}

func TestSelectOpsIsTheDeliveryRule(t *testing.T) {
	op := func(origin string, seq uint64) store.Op {
		return store.Op{Origin: origin, Seq: seq, Kind: store.OpObservation}
	}
	cases := []struct {
		name  string
		known store.VersionVector
		ops   []store.Op
		want  []uint64 // seqs applied, in order
		after store.VersionVector
		res   store.ApplyResult
	}{
		{"in order", store.VersionVector{}, []store.Op{op("a", 1), op("a", 2)}, []uint64{1, 2}, store.VersionVector{"a": 2}, store.ApplyResult{Applied: 2}},
		{"duplicates", store.VersionVector{"a": 2}, []store.Op{op("a", 1), op("a", 2), op("a", 3), op("a", 3)}, []uint64{3},
			store.VersionVector{"a": 3}, store.ApplyResult{Applied: 1, Duplicates: 3}},
		{"past a gap", store.VersionVector{"a": 1}, []store.Op{op("a", 3), op("a", 2), op("a", 4)}, []uint64{2},
			store.VersionVector{"a": 2}, store.ApplyResult{Applied: 1, Gaps: 2}},
		{"origins apart", store.VersionVector{"b": 5}, []store.Op{op("b", 6), op("a", 1), op("b", 8)}, []uint64{6, 1},
			store.VersionVector{"a": 1, "b": 6}, store.ApplyResult{Applied: 2, Gaps: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, after, res := selectOps(c.ops, c.known)
			var got []uint64
			for _, o := range next {
				got = append(got, o.Seq)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) || fmt.Sprint(after) != fmt.Sprint(c.after) || res != c.res {
				t.Fatalf("selectOps = %v %v %+v; want %v %v %+v", got, after, res, c.want, c.after, c.res)
			}
		})
	}
}

// TestMintedTombstoned: the one tombstone read of a local commit finds a tombstoned ID
// among the IDs it minted, and only that one; it reads the tombstones' key, not the table.
func TestMintedTombstoned(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	for i := range 100 {
		if _, err := r.w.ExecContext(ctx, "INSERT INTO tombstones(id, hlc, origin) VALUES (?, 1, 'dev-b')", fmt.Sprint("gone-", i)); err != nil {
			t.Fatal(err)
		}
	}
	plan := commitPlan{
		prompts:      []plannedPrompt{{p: memory.Prompt{ID: "kept-prompt"}}},
		observations: []plannedObservation{{o: memory.Observation{ID: "gone-7"}}, {o: memory.Observation{ID: "kept-obs"}}},
		summaries:    []plannedSummary{{s: memory.Summary{ID: "gone-42"}}},
	}
	var dead map[string]bool
	var qplan []string
	err := r.writeTx(ctx, func(tx *wtx) error {
		var err error
		if dead, err = mintedTombstoned(ctx, tx, plan); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, "EXPLAIN QUERY PLAN SELECT id FROM tombstones WHERE id IN (SELECT value FROM json_each(?))", `["x"]`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				return err
			}
			qplan = append(qplan, detail)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{"gone-7": true, "gone-42": true}; !maps.Equal(dead, want) {
		t.Fatalf("tombstoned among the minted IDs: %v, want %v", dead, want)
	}
	for _, d := range qplan {
		if strings.HasPrefix(d, "SCAN tombstones") {
			t.Fatalf("the lookup scans the tombstones: %q", qplan)
		}
	}
	t.Logf("plan: %q", qplan)
}

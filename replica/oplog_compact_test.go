package replica_test

import (
	"context"
	"fmt"
	"github.com/memnode/memnode/store"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

type opKey struct {
	origin string
	seq    uint64
}

// compactionWorld adds compaction to a world: at any step an origin compacts its op-log up to
// a floor every origin (the group's members) has passed — the floor a node computes from the
// announced vectors, or a lower one (announcements are stale). Before each compaction the
// origins' own ops are recorded, so the uncompacted history stays known (shadow).
type compactionWorld struct {
	*world
	shadow    map[opKey]store.Op
	compacted int
}

// newCompactionWorld wraps w so that its compaction steps compact the chosen origin.
func newCompactionWorld(w *world) *compactionWorld {
	c := &compactionWorld{world: w, shadow: map[opKey]store.Op{}}
	w.compact = func(i int) { c.compactAt(w.origins[i], fmt.Sprintf("compact %d", i)) }
	return c
}

func (c *compactionWorld) record() {
	for _, op := range c.allOps() {
		k := opKey{op.Origin, op.Seq}
		if _, ok := c.shadow[k]; !ok && op.Kind != store.OpCompacted {
			c.shadow[k] = op
		}
	}
}

// floor is the minimum of every origin's version vector, each entry maybe lowered.
func (c *compactionWorld) floor(label string) store.VersionVector {
	var floor store.VersionVector
	for _, r := range c.origins {
		vv, err := r.VersionVector(c.ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		if floor == nil {
			floor = vv
			continue
		}
		for o, s := range floor {
			floor[o] = min(s, vv[o])
		}
	}
	stale := rapid.Bool().Draw(c.t, label+" stale floor")
	for _, o := range slices.Sorted(maps.Keys(floor)) {
		if stale {
			floor[o] = rapid.Uint64Range(0, floor[o]).Draw(c.t, label+" floor of "+o)
		}
	}
	return floor
}

func (c *compactionWorld) compactAt(r *replica.Replica, label string) {
	c.record()
	res, err := r.Compact(c.ctx, c.floor(label))
	if err != nil {
		c.t.Fatal(err)
	}
	c.compacted += res.Removed()
}

// TestCRDTCompactionNeverLosesAState: histories as in TestCRDTConvergesUnderAnySchedule, with
// origins compacting their op-logs at random steps (to a floor every origin has passed, or a
// stale lower one) while ops still travel between them. Then every replica receives the
// compacted logs (placeholders for what was compacted) under the chaos schedule, every origin
// compacts once more, and new devices start from one origin's compacted log (relay): every
// replica ends equal to a replica that applied the uncompacted history, and nothing
// forgotten survives.
func TestCRDTCompactionNeverLosesAState(t *testing.T) {
	total := 0
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, t, rapid.IntRange(2, 3).Draw(rt, "origins"))
		defer w.close()
		c := newCompactionWorld(w)
		w.run()
		c.record()
		all := w.allOps()
		for k, r := range w.origins {
			w.deliverChaos(r, all, fmt.Sprintf("origin %d", k))
		}
		for k, r := range w.origins {
			c.compactAt(r, fmt.Sprintf("final compact %d", k))
		}
		replicas := append([]*replica.Replica{}, w.origins...)
		for k := range 2 {
			from := w.origins[rapid.IntRange(0, len(w.origins)-1).Draw(rt, "relay")]
			r := w.fresh(fmt.Sprintf("new-device-%d", k))
			w.deliverChaos(r, w.held(from), fmt.Sprintf("new device %d", k))
			replicas = append(replicas, r)
		}
		// The reference never saw a compaction: every op as first written, in seq order.
		history := make([]store.Op, 0, len(c.shadow))
		for _, op := range c.shadow {
			history = append(history, op)
		}
		slices.SortFunc(history, func(a, b store.Op) int {
			if a.Origin != b.Origin {
				if a.Origin < b.Origin {
					return -1
				}
				return 1
			}
			return int(a.Seq) - int(b.Seq)
		})
		ref := w.fresh("reference")
		if _, err := ref.ApplyOps(w.ctx, history); err != nil {
			rt.Fatal(err)
		}
		want := w.dump(ref)
		for k, r := range replicas {
			if got := w.dump(r); got != want {
				rt.Fatalf("replica %d (compacted history) differs from the uncompacted one:\n%s\n---\n%s", k, want, got)
			}
			w.checkForgotten(r, fmt.Sprintf("replica %d", k))
		}
		total += c.compacted
	})
	// About half the cases compact something: with -short's 10 cases none does once in ~400
	// runs, so only the full count (100) fails on it.
	if total == 0 && !testing.Short() {
		t.Fatal("no case compacted anything: the property says nothing")
	}
	t.Logf("%d ops compacted over all cases", total)
}

// TestCompactKeepsWinnersAndTombstones: a session written three times (the last write wins)
// and a forgotten observation: compaction to a floor both devices passed removes the two
// superseded session ops and the forgotten observation's op, keeps the winner and the forget,
// and OpsSince serves placeholders for the removed seqs, from which a new device converges.
// Below the floor nothing is removed.
func TestCompactKeepsWinnersAndTombstones(t *testing.T) {
	ctx := context.Background()
	a, b := openPlain(t, "dev-a"), openPlain(t, "dev-b")
	for _, st := range []string{"active", "active", "completed"} {
		if _, err := a.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: 7, Status: st}}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s1", Project: "p", Type: "change", Title: "secretword here"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, []string{res.Observations[0].ID}); err != nil {
		t.Fatal(err)
	}
	// a: seqs 1-3 session, 4 observation, 5 forget.
	if _, err := b.ApplyOps(ctx, allOpsOf(t, a)); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Compact(ctx, store.VersionVector{"dev-a": 2}); err != nil || got.Removed() != 0 {
		t.Fatalf("compact below the winner: %+v, %v; want nothing removed (the winner, seq 3, is not yet held by every member)", got, err)
	}
	got, err := a.Compact(ctx, store.VersionVector{"dev-a": 5})
	if err != nil {
		t.Fatal(err)
	}
	if got.Superseded != 2 || got.Forgotten != 1 {
		t.Fatalf("compacted %+v, want 2 superseded and 1 forgotten", got)
	}
	ops := allOpsOf(t, a)
	var kinds []string
	for i, op := range ops {
		if op.Seq != uint64(i+1) {
			t.Fatalf("op %d has seq %d: OpsSince must stay contiguous", i, op.Seq)
		}
		kinds = append(kinds, op.Kind)
	}
	if want := []string{"compacted", "compacted", "session", "compacted", "forget"}; !slices.Equal(kinds, want) {
		t.Fatalf("served kinds %v, want %v", kinds, want)
	}
	c := openPlain(t, "dev-c")
	if _, err := c.ApplyOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	if vv, _ := c.VersionVector(ctx); vv["dev-a"] != 5 {
		t.Fatalf("new device's vector %v, want dev-a at 5", vv)
	}
	if da, dc := mustDump(t, a), mustDump(t, c); da != dc || da != mustDump(t, b) {
		t.Fatalf("a new device from the compacted log differs:\n%s\n---\n%s", da, dc)
	}
	// A batch boundary inside the holes and at the tail: placeholders fill to the limit.
	page, err := a.OpsSince(ctx, "dev-a", 3, 1)
	if err != nil || len(page) != 1 || page[0].Seq != 4 || page[0].Kind != store.OpCompacted {
		t.Fatalf("OpsSince(after 3, limit 1) = %+v, %v; want the placeholder of seq 4", page, err)
	}
}

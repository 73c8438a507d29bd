package replica_test

import (
	"fmt"
	"github.com/memnode/memnode/store"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/replica"
)

// TestCRDTRemovalCutOffUnderAnySchedule: origin 0 removes origin 2 with the cut-off it knows;
// origin 2, not yet aware, keeps writing; its new ops travel any path (straight to either
// member, relayed by member 1 before member 1 learns the removal, in any order and batching).
// Once both members hold the cut, they agree exactly and neither holds any op of origin 2
// past the cut, nor anything those ops wrote.
func TestCRDTRemovalCutOffUnderAnySchedule(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, t, 3)
		defer w.close()
		w.run()
		m0, m1, gone := w.origins[0], w.origins[1], w.origins[2]
		vv0, err := m0.VersionVector(w.ctx)
		if err != nil {
			rt.Fatal(err)
		}
		cut := vv0[gone.Origin()]
		if _, err := m0.CutOrigin(w.ctx, gone.Origin(), cut); err != nil {
			rt.Fatal(err)
		}
		m1Knows := false
		learn := func() {
			if _, err := m1.CutOrigin(w.ctx, gone.Origin(), cut); err != nil {
				rt.Fatal(err)
			}
			m1Knows = true
		}
		relay := func(from, to *replica.Replica, label string) {
			ops := w.held(from)
			if len(ops) == 0 {
				return
			}
			perm := permute(rt, ops, label+" order")
			w.applyInBatches(to, perm[:rapid.IntRange(0, len(perm)).Draw(rt, label+" delivered")], label)
		}
		// After the removal: the removed device writes and renames; everyone exchanges.
		for range rapid.IntRange(1, 12).Draw(rt, "steps after removal") {
			switch rapid.IntRange(0, 6).Draw(rt, "action after removal") {
			case 0, 1:
				w.commit(2)
			case 2:
				w.rename(2)
			case 3:
				w.commit(rapid.IntRange(0, 1).Draw(rt, "member writes"))
			case 4:
				relay(gone, []*replica.Replica{m0, m1}[rapid.IntRange(0, 1).Draw(rt, "removed reaches")], "from removed")
			case 5:
				if rapid.Bool().Draw(rt, "0 to 1") {
					relay(m0, m1, "0 to 1")
				} else {
					relay(m1, m0, "1 to 0")
				}
			case 6:
				if !m1Knows {
					learn()
				}
			}
		}
		if !m1Knows {
			learn()
		}
		// A last relay of everything the removed device holds, then anti-entropy between the
		// members until each holds everything the other does.
		relay(gone, m1, "late relay")
		var members []store.Op
		for _, r := range []*replica.Replica{m0, m1} {
			members = append(members, w.held(r)...)
		}
		for k, r := range []*replica.Replica{m0, m1} {
			w.deliverChaos(r, members, fmt.Sprintf("member %d", k))
		}
		after, err := gone.OpsSince(w.ctx, gone.Origin(), cut, 1_000_000)
		if err != nil {
			rt.Fatal(err)
		}
		// The one thing a cut cannot undo is a forget past it that a member applied before it
		// learned the removal (the content is gone there); CutOrigin's doc says so.
		forgotPastCut := false
		for _, op := range after {
			forgotPastCut = forgotPastCut || op.Kind == store.OpForget
		}
		d0, d1 := w.dump(m0), w.dump(m1)
		if d0 != d1 && !forgotPastCut {
			rt.Fatalf("members differ after the removal:\n%s\n---\n%s", d0, d1)
		}
		for k, r := range []*replica.Replica{m0, m1} {
			d := []string{d0, d1}[k]
			held, err := r.OpsSince(w.ctx, gone.Origin(), cut, 10)
			if err != nil {
				rt.Fatal(err)
			}
			if len(held) > 0 {
				rt.Fatalf("member %d holds op %d of the removed origin, past the cut %d", k, held[0].Seq, cut)
			}
			for _, op := range after {
				if op.Kind == store.OpObservation || op.Kind == store.OpPrompt || op.Kind == store.OpSummary {
					// A tombstone may name it: a member forgot a record it had not seen yet.
					if held := strings.ReplaceAll(d, "tombstone\t"+op.RecordID, ""); strings.Contains(held, op.RecordID) {
						rt.Fatalf("member %d holds record %s the removed origin wrote past the cut (op %d):\n%s", k, op.RecordID, op.Seq, d)
					}
				}
			}
		}
	})
}

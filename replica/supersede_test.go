package replica_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// correction is a correction of old written at r.
func correction(tb testing.TB, r *replica.Replica, old, text string) memory.Observation {
	tb.Helper()
	c, err := r.Correct(context.Background(), old, memory.Observation{SessionID: "manual:p", Project: "p", Type: "correction",
		Title: text, Narrative: text, CreatedAt: 50})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func recentIDs(tb testing.TB, r *replica.Replica) []string {
	tb.Helper()
	obs, err := r.RecentObservations(context.Background(), "p", 100)
	if err != nil {
		tb.Fatal(err)
	}
	var ids []string
	for _, o := range obs {
		ids = append(ids, o.ID)
	}
	return ids
}

// TestCRDTConcurrentCorrectionsConverge: two devices correct the same observation without
// having seen each other's correction, and other writes and forgets go on around them.
// Whatever the order and batching in which a device receives all the ops, it ends with the
// same state (CanonicalDump), and the merge rule holds: every correction stays and the
// record is superseded by both (a grow-only set of links), so neither device's correction
// is lost and the record leaves the context once either has arrived.
func TestCRDTConcurrentCorrectionsConverge(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, t, 3)
		defer w.close()
		ctx := w.ctx
		a, b := w.origins[0], w.origins[1]
		res, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "sess-1", Project: "p",
			Type: "discovery", Title: "the cache is per user", CreatedAt: 10}}})
		if err != nil {
			rt.Fatal(err)
		}
		x := res.Observations[0].ID
		w.records, w.texts[x] = append(w.records, x), "the cache is per user"
		for _, r := range w.origins[1:] {
			if _, err := r.ApplyOps(ctx, allOpsOf(t, a)); err != nil {
				rt.Fatal(err)
			}
		}
		w.run() // other writes, forgets (maybe of x), corrections, partial exchanges
		var fixes []string
		for k, r := range []*replica.Replica{a, b} {
			text := fmt.Sprintf("concurrent%dtext", k)
			c, err := r.Correct(ctx, x, memory.Observation{SessionID: "manual:p", Project: "p", Type: "correction",
				Title: text, Narrative: text, CreatedAt: 60})
			if err != nil {
				if !refused(err) {
					rt.Fatal(err)
				}
				continue
			}
			fixes = append(fixes, c.ID)
			w.records, w.texts[c.ID] = append(w.records, c.ID), text
		}
		w.run()
		all := w.allOps()
		var dumps []string
		var last *replica.Replica
		for k := range 3 {
			r := w.fresh(fmt.Sprintf("observer-%d", k))
			w.deliverChaos(r, all, fmt.Sprintf("observer %d", k))
			dumps = append(dumps, w.dump(r))
			w.checkForgotten(r, fmt.Sprintf("observer %d", k))
			last = r
		}
		for k, d := range dumps[1:] {
			if d != dumps[0] {
				rt.Fatalf("observer %d differs from observer 0:\n%s\n---\n%s", k+1, dumps[0], d)
			}
		}
		// Both corrections that still exist supersede x: x is out of the context.
		if w.forgottenSession(x) || w.forgottenSession("sess-1") {
			return
		}
		links, err := last.Supersessions(ctx, []string{x})
		if err != nil {
			rt.Fatal(err)
		}
		live := 0
		for _, f := range fixes {
			if _, gone := w.forgotten[f]; gone {
				continue
			}
			live++
			if !slices.Contains(links, store.Supersession{Old: x, New: f}) {
				rt.Fatalf("correction %s of %s lost: links %v", f, x, links)
			}
		}
		if live > 0 && slices.Contains(recentIDs(t, last), x) {
			rt.Fatalf("superseded %s still in the session-start context", x)
		}
	})
}

// forgottenSession reports whether the session id was forgotten anywhere.
func (w *world) forgottenSession(id string) bool {
	_, ok := w.forgotten[id]
	return ok
}

// TestSupersedeRefusals: the requests a user gets one clear error for.
func TestSupersedeRefusals(t *testing.T) {
	ctx := context.Background()
	r := openPlain(t, "dev-a")
	res, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{
		{SessionID: "s", Project: "p", Type: "discovery", Title: "one", CreatedAt: 1},
		{SessionID: "s", Project: "p", Type: "discovery", Title: "two", CreatedAt: 2},
		{SessionID: "s", Project: "p", Type: "discovery", Title: "three", CreatedAt: 3},
	}})
	if err != nil {
		t.Fatal(err)
	}
	one, two, three := res.Observations[0].ID, res.Observations[1].ID, res.Observations[2].ID
	if err := r.Supersede(ctx, one, one); !errors.Is(err, store.ErrSelfSupersede) {
		t.Fatalf("self: %v", err)
	}
	if err := r.Supersede(ctx, "01NOSUCHRECORD0000000000000", two); !errors.Is(err, store.ErrUnknownRecord) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := r.Forget(ctx, []string{three}); err != nil {
		t.Fatal(err)
	}
	if err := r.Supersede(ctx, three, two); !errors.Is(err, store.ErrForgotten) {
		t.Fatalf("forgotten old: %v", err)
	}
	if err := r.Supersede(ctx, two, three); !errors.Is(err, store.ErrForgotten) {
		t.Fatalf("forgotten new: %v", err)
	}
	if _, err := r.Correct(ctx, three, memory.Observation{SessionID: "m", Project: "p", Title: "x"}); !errors.Is(err, store.ErrForgotten) {
		t.Fatalf("correct forgotten: %v", err)
	}
	if err := r.Supersede(ctx, one, two); err != nil {
		t.Fatal(err)
	}
	if err := r.Supersede(ctx, two, one); !errors.Is(err, store.ErrSupersededReplacement) {
		t.Fatalf("cycle: %v", err)
	}
	if got := recentIDs(t, r); !slices.Equal(got, []string{two}) {
		t.Fatalf("context %v, want only %s", got, two)
	}
}

// TestForgetOfCorrectionRestoresTheRecord: a link hides its record only while the
// replacement is stored; forgetting the correction brings the record back into the
// context, and forgetting the record drops its links (and their ops' payloads).
func TestForgetOfCorrectionRestoresTheRecord(t *testing.T) {
	ctx := context.Background()
	a, b := openPlain(t, "dev-a"), openPlain(t, "dev-b")
	res, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s", Project: "p", Type: "discovery", Title: "wrong", CreatedAt: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	x := res.Observations[0].ID
	c := correction(t, a, x, "right")
	if got := recentIDs(t, a); !slices.Equal(got, []string{c.ID}) {
		t.Fatalf("context %v, want the correction only", got)
	}
	if _, err := b.ApplyOps(ctx, allOpsOf(t, a)); err != nil {
		t.Fatal(err)
	}
	if got := recentIDs(t, b); !slices.Equal(got, []string{c.ID}) {
		t.Fatalf("paired device's context %v, want the correction only", got)
	}
	if _, err := a.Forget(ctx, []string{c.ID}); err != nil {
		t.Fatal(err)
	}
	if got := recentIDs(t, a); !slices.Equal(got, []string{x}) {
		t.Fatalf("after forgetting the correction: %v", got)
	}
	if _, err := a.Forget(ctx, []string{x}); err != nil {
		t.Fatal(err)
	}
	if d := mustDump(t, a); strings.Contains(d, "supersede\t") {
		t.Fatalf("link of a forgotten record kept:\n%s", d)
	}
	if _, err := b.ApplyOps(ctx, allOpsOf(t, a)); err != nil {
		t.Fatal(err)
	}
	if da, db := mustDump(t, a), mustDump(t, b); da != db {
		t.Fatalf("diverged:\n%s\n---\n%s", da, db)
	}
}

// FuzzApplySupersede: a supersede op comes from a peer (untrusted bytes). Whatever its
// payload, ApplyOps never panics; a payload it cannot read is refused as ErrBadOp with
// nothing stored, and no link it applies names a record as its own replacement.
func FuzzApplySupersede(f *testing.F) {
	f.Add("01OLD", []byte(`{"v":1,"id":"01OLD","by":"01NEW","session_id":"s","project":"p"}`))
	f.Add("01OLD", []byte(`{"id":"01OLD","by":"01OLD"}`))
	f.Add("01OLD", []byte(`{"id":"01OTHER","by":"01NEW"}`))
	f.Add("01OLD", []byte(`{"v":9,"id":"01OLD","by":"01NEW","extra":[1,2]}`))
	f.Add("01OLD", []byte(`{"id":"01OLD"}`))
	f.Add("01OLD", []byte(`[]`))
	f.Add("", []byte(`null`))
	ctx := context.Background()
	r := openPlain(f, "fuzz-dev")
	seq := uint64(0)
	f.Fuzz(func(t *testing.T, record string, payload []byte) {
		seq++
		origin := fmt.Sprintf("peer-%d", seq) // a fresh origin: seq 1 is always next
		_, err := r.ApplyOps(ctx, []store.Op{{Origin: origin, Seq: 1, HLC: 1, Kind: store.OpSupersede, RecordID: record, Payload: payload}})
		if err != nil {
			if !errors.Is(err, store.ErrBadOp) {
				t.Fatalf("refused with %v, want ErrBadOp", err)
			}
			return
		}
		d := mustDump(t, r)
		for _, line := range strings.Split(d, "\n") {
			if f, ok := strings.CutPrefix(line, "supersede\t"); ok {
				parts := strings.Split(f, "\t")
				if parts[0] == parts[1] {
					t.Fatalf("a record superseded by itself: %q", line)
				}
			}
		}
	})
}

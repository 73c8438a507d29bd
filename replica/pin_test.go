package replica_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

// TestPinConvergesAndFollowsForget: a pin on one device and an unpin of the same note on
// another, delivered in either order, leave both devices with the later write; a pinned
// note and every global note head PinnedObservations, newest first; forgetting the note
// drops its pin and its ops' payloads.
func TestPinConvergesAndFollowsForget(t *testing.T) {
	ctx := context.Background()
	a, b := openPlain(t, "origin-a"), openPlain(t, "origin-b")
	commit := func(r *replica.Replica, o memory.Observation) string {
		t.Helper()
		res, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{o}})
		if err != nil || len(res.Observations) != 1 {
			t.Fatalf("commit: %v %+v", err, res)
		}
		return res.Observations[0].ID
	}
	note := commit(a, memory.Observation{SessionID: "s1", Project: "web", Type: "decision", Title: "use pnpm", Narrative: "never npm", CreatedAt: 10})
	other := commit(a, memory.Observation{SessionID: "s1", Project: "web", Type: "change", Title: "edit", CreatedAt: 20})
	global := commit(a, memory.Observation{SessionID: memory.ManualSession(memory.GlobalProject), Project: memory.GlobalProject, Type: "note",
		Title: "tabs", Narrative: "always tabs", CreatedAt: 5})
	sync := func(dst, src *replica.Replica) {
		t.Helper()
		if _, err := dst.ApplyOps(ctx, allOpsOf(t, src)); err != nil {
			t.Fatal(err)
		}
	}
	sync(b, a)
	if _, err := a.Pin(ctx, note, true); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Pin(ctx, note, false); err != nil { // later on b's clock: b's write wins
		t.Fatal(err)
	}
	sync(b, a) // a's older pin arrives after b's unpin
	sync(a, b)
	if da, db := mustDump(t, a), mustDump(t, b); da != db {
		t.Fatalf("pins diverge:\n%s\n---\n%s", da, db)
	}
	for _, r := range []*replica.Replica{a, b} {
		if got, _ := r.Pinned(ctx, []string{note}); got[note] {
			t.Errorf("the later unpin lost to the earlier pin")
		}
	}
	if _, err := a.Pin(ctx, note, true); err != nil {
		t.Fatal(err)
	}
	sync(b, a)
	for _, r := range []*replica.Replica{a, b} {
		got, err := r.PinnedObservations(ctx, "web", 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, o := range got {
			ids = append(ids, o.ID)
		}
		if strings.Join(ids, ",") != note+","+global {
			t.Errorf("pinned of web = %v, want the pinned note then the global one (%s, %s); %s is not pinned", ids, note, global, other)
		}
		other, _ := r.PinnedObservations(ctx, "api", 10)
		if len(other) != 1 || other[0].ID != global {
			t.Errorf("another project's pinned = %+v, want only the global note", other)
		}
	}
	if _, err := a.Pin(ctx, "nope", true); !errors.Is(err, store.ErrUnknownRecord) {
		t.Errorf("pinning an unknown ID: %v", err)
	}

	if _, err := a.Forget(ctx, []string{note}); err != nil {
		t.Fatal(err)
	}
	sync(b, a)
	for _, r := range []*replica.Replica{a, b} {
		if got, _ := r.Pinned(ctx, []string{note}); got[note] {
			t.Errorf("a forgotten note stays pinned")
		}
		for _, op := range allOpsOf(t, r) {
			if op.Kind == store.OpPin && op.RecordID == note && op.Payload != nil {
				t.Errorf("a pin op of the forgotten note keeps its payload: %s", op.Payload)
			}
		}
	}
	if da, db := mustDump(t, a), mustDump(t, b); da != db {
		t.Fatalf("after forget the replicas diverge:\n%s\n---\n%s", da, db)
	}
}

package team

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// TestTeamCorrectionsReachEveryMember: on a real rqlite cluster, an admin corrects another
// member's shared record and the author corrects it too, at the same time: both
// corrections reach both members, the record is superseded by both everywhere, and it is
// out of both members' session-start context.
func TestTeamCorrectionsReachEveryMember(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	a := newMember(t, "alice", "laptop")
	b := newMember(t, "bob", "desktop")
	const P = "billing-api"
	a.join(t, c, P)
	b.join(t, c, P)
	a.t.Start(ctx)
	b.t.Start(ctx)

	// Correcting another member's record is an admin's right (DESIGN.md, "Trust model").
	if _, err := a.t.Admin(ctx, true, "@bob/desktop"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "bob knows he is an admin", 30*time.Second, func() bool { return b.status(t).Admin })
	x := a.record(t, P, "invoices are rounded per line")
	testkit.WaitFor(t, "A's record on B", 30*time.Second, func() bool { return b.has(t, "invoices are rounded per line") })
	correct := func(m *member, text string) string {
		t.Helper()
		n, err := m.r.Correct(ctx, x, memory.Observation{SessionID: "manual:" + P, Project: P, Type: "correction",
			Title: text, Narrative: text, CreatedAt: 1790000001000})
		if err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	fromB := correct(b, "invoices are rounded on the total, not per line")
	fromA := correct(a, "rounding happens once, on the invoice total")
	want := []store.Supersession{{Old: x, New: fromA}, {Old: x, New: fromB}}
	slices.SortFunc(want, func(p, q store.Supersession) int {
		if p.New < q.New {
			return -1
		}
		return 1
	})
	for _, m := range []*member{a, b} {
		testkit.WaitFor(t, m.user+" to hold both corrections", 30*time.Second, func() bool {
			links, err := m.r.Supersessions(ctx, []string{x})
			return err == nil && slices.Equal(links, want)
		})
		recent, err := m.r.RecentObservations(ctx, P, 50)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, o := range recent {
			ids = append(ids, o.ID)
		}
		if slices.Contains(ids, x) || !slices.Contains(ids, fromA) || !slices.Contains(ids, fromB) {
			t.Fatalf("%s's context: %v (corrected %s, corrections %s %s)", m.user, ids, x, fromA, fromB)
		}
	}
	if ea, eb := a.export(t, P), b.export(t, P); ea != eb {
		t.Fatalf("members differ:\n%s\n---\n%s", ea, eb)
	}
}

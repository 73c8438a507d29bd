package team

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

// signedTombstone is a tombstone for record by m, validly signed, written by m's own
// cluster user straight into team_ops (its pusher would not send it: m is no admin).
func (m *member) writeTombstone(tb testing.TB, project, record string, tseq uint64) {
	tb.Helper()
	author, _ := m.t.st.get(context.Background(), "author")
	op := Op{Origin: m.r.Origin(), TSeq: tseq, Project: project, Kind: store.OpForget, RecordID: record, HLC: uint64(time.Now().UnixMilli()) << 16,
		Payload: []byte(`{"v":1,"id":"` + record + `"}`), Author: author}
	if err := sign(m.key, &op); err != nil {
		tb.Fatal(err)
	}
	c, err := m.t.client()
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := c.execute(context.Background(), pushStatements([]Op{op})[:1]); err != nil {
		tb.Fatal(err)
	}
}

func (m *member) status(tb testing.TB) Status {
	tb.Helper()
	st, err := m.t.Status(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// TestTeamAdminsAddedAndRemovedBySignedOps: on a real rqlite cluster the founder makes bob
// an admin with a signed op; bob's tombstone of alice's record is then honoured by every
// member, one bob wrote before he was an admin stays refused (also for a member joining
// later), an admin change signed by a non-admin is refused, and a removed admin's
// tombstone is refused again.
func TestTeamAdminsAddedAndRemovedBySignedOps(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	const P = "payments"
	a, b, m := newMember(t, "alice", "laptop"), newMember(t, "bob", "desktop"), newMember(t, "carol", "tablet")
	for _, x := range []*member{a, b, m} {
		x.join(t, c, P)
		x.t.Start(ctx)
	}
	if _, err := b.t.Admin(ctx, true, "@bob/desktop"); !errors.Is(err, ErrNotAdmin) {
		t.Fatalf("admin add by a non-admin: %v, want ErrNotAdmin", err)
	}
	early := a.record(t, P, "EARLY record bob forgets before he is an admin")
	testkit.WaitFor(t, "early record on bob and carol", 30*time.Second, func() bool {
		return b.has(t, "EARLY record bob forgets before he is an admin") && m.has(t, "EARLY record bob forgets before he is an admin")
	})
	b.writeTombstone(t, P, early, 1000) // past its own stream: its real ops keep their numbers
	testkit.WaitForState(t, "carol refuses bob's tombstone", 5*time.Second, func() (bool, string) {
		st := m.status(t)
		return st.Rejected == 1, fmt.Sprintf("%+v", st)
	})

	ch, err := a.t.Admin(ctx, true, "@bob/desktop")
	if err != nil || !ch.Changed || ch.Device != b.r.Origin() || !slices.Contains(ch.Admins, "bob/desktop") {
		t.Fatalf("admin add: %+v %v", ch, err)
	}
	if again, err := a.t.Admin(ctx, true, b.r.Origin()); err != nil || again.Changed {
		t.Fatalf("adding an admin twice: %+v %v", again, err)
	}
	testkit.WaitForState(t, "bob knows he is an admin", 5*time.Second, func() (bool, string) {
		st := b.status(t)
		return st.Admin, fmt.Sprintf("%+v", st)
	})
	late := a.record(t, P, "LATE record bob forgets as an admin")
	testkit.WaitFor(t, "late record on bob", 30*time.Second, func() bool { return b.has(t, "LATE record bob forgets as an admin") })
	if _, err := b.r.Forget(ctx, []string{late}); err != nil {
		t.Fatal(err)
	}
	for name, x := range map[string]*member{"alice": a, "carol": m} {
		testkit.WaitFor(t, "bob's tombstone honoured by "+name, 30*time.Second, func() bool { return !x.has(t, "LATE record bob forgets as an admin") })
		if !x.has(t, "EARLY record bob forgets before he is an admin") {
			t.Fatalf("%s applied the tombstone bob wrote before he was an admin", name)
		}
	}

	// A member joining now judges every op by the admins at its position.
	d := newMember(t, "mallory", "fresh")
	d.join(t, c, P)
	if _, err := d.t.Pull(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if !d.has(t, "EARLY record bob forgets before he is an admin") || d.has(t, "LATE record bob forgets as an admin") {
		t.Fatalf("late joiner: early %v (want true), late %v (want false)", d.has(t, "EARLY record bob forgets before he is an admin"), d.has(t, "LATE record bob forgets as an admin"))
	}
	if st := d.status(t); !slices.Contains(st.Admins, "bob/desktop") || st.Admin {
		t.Fatalf("late joiner's admins: %+v", st)
	}

	// An admin change signed by a non-admin is refused by everyone.
	forged := Op{Origin: m.r.Origin(), TSeq: 1, Project: adminStream, Kind: kindAdminAdd, RecordID: m.r.Origin(), Author: "carol/tablet"}
	if err := sign(m.key, &forged); err != nil {
		t.Fatal(err)
	}
	mc, _ := m.t.client()
	if _, err := mc.execute(ctx, pushStatements([]Op{forged})); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForState(t, "carol's self-promotion refused", 5*time.Second, func() (bool, string) {
		st := a.status(t)
		return st.Rejected >= 2 && !slices.Contains(st.Admins, "carol/tablet"), fmt.Sprintf("%+v", st)
	})
	if st := m.status(t); st.Admin {
		t.Fatalf("carol made herself an admin: %+v", st)
	}

	// Removed again, bob's tombstones are refused again; the last admin stays.
	if ch, err := a.t.Admin(ctx, false, "@bob/desktop"); err != nil || !ch.Changed || slices.Contains(ch.Admins, "bob/desktop") {
		t.Fatalf("admin remove: %+v %v", ch, err)
	}
	gone := a.record(t, P, "GONE record bob forgets after his removal")
	testkit.WaitFor(t, "record on carol", 30*time.Second, func() bool { return m.has(t, "GONE record bob forgets after his removal") })
	b.writeTombstone(t, P, gone, 2000)
	testkit.WaitForState(t, "carol refuses the removed admin's tombstone", 5*time.Second, func() (bool, string) {
		st := m.status(t)
		return st.Rejected >= 3, fmt.Sprintf("%+v", st)
	})
	if !m.has(t, "GONE record bob forgets after his removal") {
		t.Fatal("a removed admin's tombstone was honoured")
	}
	if _, err := a.t.Admin(ctx, false, "@alice/laptop"); !errors.Is(err, ErrLastAdmin) {
		t.Fatalf("removing the last admin: %v, want ErrLastAdmin", err)
	}
	if _, err := a.t.Admin(ctx, true, "@nobody/here"); !errors.Is(err, ErrUnknownMember) {
		t.Fatalf("unknown member: %v, want ErrUnknownMember", err)
	}
}

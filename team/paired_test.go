package team

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
)

// syncOps hands from's own ops past after to to, as device sync does (same ApplyOps path,
// the ops under from's origin), and returns the last seq handed.
func syncOps(tb testing.TB, from, to *replica.Replica, after uint64) uint64 {
	tb.Helper()
	ops, err := from.OpsSince(context.Background(), from.Origin(), after, 100000)
	if err != nil {
		tb.Fatal(err)
	}
	if len(ops) == 0 {
		return after
	}
	if _, err := to.ApplyOps(context.Background(), ops); err != nil {
		tb.Fatal(err)
	}
	return ops[len(ops)-1].Seq
}

// TestTeamForgetOnAPairedDeviceReachesTheTeam: alice's laptop pushed a record to the team;
// her phone, paired with the laptop by device sync and in no team, forgets it. The phone's
// tombstone reaches the laptop by device sync, the laptop signs it for the team (it is the
// record's author there), and the record ends on no member and not in the cluster's tables
// (its ops' payloads NULL, its searchable row gone). A paired device's forget of another
// member's record stays local (alice is no admin): the team would refuse it.
func TestTeamForgetOnAPairedDeviceReachesTheTeam(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	const P = "billing"
	a, b := newMember(t, "alice", "laptop"), newMember(t, "bob", "desktop")
	for _, x := range []*member{b, a} { // bob founds the team: alice is no admin
		x.join(t, c, P)
		x.t.Start(ctx)
	}
	_, phoneID := newKey(t)
	phone := testkit.OpenReplica(t, phoneID)
	gone := a.record(t, P, "ALICE record forgotten on her phone")
	a.record(t, P, "ALICE record that stays")
	bobs := b.record(t, P, "BOB record alice's phone forgets locally")
	testkit.WaitFor(t, "records on both members", 30*time.Second, func() bool {
		return b.has(t, "ALICE record forgotten on her phone") && a.has(t, "BOB record alice's phone forgets locally")
	})
	syncOps(t, a.r, phone, 0)
	if n, err := phone.Forget(ctx, []string{gone, bobs}); err != nil || n == 0 {
		t.Fatalf("forget on the phone: %d %v", n, err)
	}
	syncOps(t, phone, a.r, 0)

	admin := newRQ(c.URLs(), rqlitetest.Admin, c.AdminPassword, 3*time.Second)
	testkit.WaitForState(t, "the phone's forget on every member and the cluster", 20*time.Second, func() (bool, string) {
		res, err := admin.query(ctx, levelWeak, []stmt{
			st(`SELECT COUNT(*) FROM team_ops WHERE record_id = ? AND payload IS NOT NULL AND kind != 'forget'`, gone),
			st(`SELECT COUNT(*) FROM team_records WHERE id = ?`, gone),
		})
		if err != nil {
			return false, err.Error()
		}
		ops, _ := res[0].scalar()
		rows, _ := res[1].scalar()
		return ops == 0 && rows == 0 && !b.has(t, "ALICE record forgotten on her phone") && !a.has(t, "ALICE record forgotten on her phone"),
			fmt.Sprintf("cluster: %d ops with content, %d searchable rows; bob has it: %v", ops, rows, b.has(t, "ALICE record forgotten on her phone"))
	})
	a.record(t, P, "ALICE sentinel after the forget")
	testkit.WaitFor(t, "sentinel on bob", 30*time.Second, func() bool { return b.has(t, "ALICE sentinel after the forget") })
	if !b.has(t, "ALICE record that stays") || !b.has(t, "BOB record alice's phone forgets locally") {
		t.Fatal("bob lost a record nobody with the right forgot")
	}
	if st := b.status(t); st.Rejected != 0 {
		t.Fatalf("bob refused %d ops: the laptop sent a tombstone the team refuses: %+v", st.Rejected, st.Refused)
	}
}

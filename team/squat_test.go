package team

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

// TestTeamSquattedSequenceIsReportedToItsPusher: a member writes a row under alice's device
// ID and her next sequence number before she pushes it. Bob refuses the row and gets
// alice's real op all the same; alice's status names the squatted op and its cause.
func TestTeamSquattedSequenceIsReportedToItsPusher(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	const P = "ledger"
	a, b, m := newMember(t, "alice", "laptop"), newMember(t, "bob", "desktop"), newMember(t, "mallory", "evil")
	for _, x := range []*member{a, b, m} {
		x.join(t, c, P)
	}
	a.t.Start(ctx)
	b.t.Start(ctx)
	a.record(t, P, "first record of alice")
	testkit.WaitFor(t, "first record on bob", 30*time.Second, func() bool { return b.has(t, "first record of alice") })
	if st := a.status(t); len(st.Squatted) != 0 {
		t.Fatalf("squats before any: %+v", st.Squatted)
	}
	var next int
	if err := a.t.st.db.QueryRowContext(context.Background(), `SELECT MAX(tseq) + 1 FROM outbox WHERE project = ?`, P).Scan(&next); err != nil {
		t.Fatal(err)
	}
	squat := Op{Origin: a.r.Origin(), TSeq: uint64(next), Project: P, Kind: store.OpObservation, RecordID: "01SQUATSQUATSQUATSQUATSQUA",
		HLC: 1, Payload: []byte(`{"id":"01SQUATSQUATSQUATSQUATSQUA","session_id":"s","project":"ledger","type":"decision","title":"SQUAT","created_at":1}`),
		Author: "alice/laptop"}
	if err := sign(m.key, &squat); err != nil {
		t.Fatal(err)
	}
	mc, _ := m.t.client()
	if _, err := mc.execute(ctx, pushStatements([]Op{squat})[:1]); err != nil {
		t.Fatal(err)
	}
	a.record(t, P, "second record of alice, its number squatted")
	testkit.WaitFor(t, "alice's real op on bob", 30*time.Second, func() bool { return b.has(t, "second record of alice, its number squatted") })
	if b.has(t, "SQUAT") {
		t.Fatal("bob applied the squatting row")
	}
	testkit.WaitForState(t, "the squat in alice's status", 5*time.Second, func() (bool, string) {
		st := a.status(t)
		return len(st.Squatted) == 1, fmt.Sprintf("%+v", st)
	})
	s := a.status(t).Squatted[0]
	if s.Project != P || s.TSeq != uint64(next) || s.Pos == 0 || !strings.Contains(s.Error, fmt.Sprintf("op %d of %s", next, P)) ||
		!strings.Contains(s.Error, "not signed by this device") || !strings.Contains(s.Error, "signature does not verify") {
		t.Fatalf("squat report: %+v", s)
	}
	if st := b.status(t); st.Rejected != 1 || len(st.Squatted) != 0 {
		t.Fatalf("bob's status: rejected %d, squatted %+v; want 1 rejected, no squat of his own", st.Rejected, st.Squatted)
	}
}

package team

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

// TestTeamRemovedMemberIsRefusedEverywhere: on a real rqlite cluster the admin removes
// mallory (`memnode team remove @mallory/evil`); her node learns it and stops; the operator
// rotates the credentials (mallory's user out of the auth file, the node restarted), and
// mallory, holding bob's credentials, keeps signing ops with her key — a record and a
// tombstone of her own earlier record, which as its author she could forget before. Every
// member refuses them (named in team status with the removal's position), a member joining
// later too; what she wrote before the removal stays; her key is never admitted again; her
// own copy keeps what it pulled. Every admission's payload nulled on the cluster before
// carol joins changes nothing of her verdicts.
func TestTeamRemovedMemberIsRefusedEverywhere(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	const P = "billing"
	a, b, m := newMember(t, "alice", "laptop"), newMember(t, "bob", "desktop"), newMember(t, "mallory", "evil")
	for _, x := range []*member{a, b, m} {
		x.join(t, c, P)
		x.t.Start(ctx)
	}
	a.record(t, P, "ALICE record mallory pulled")
	before := m.record(t, P, "MALLORY record before her removal")
	for name, x := range map[string]*member{"alice": a, "bob": b} {
		testkit.WaitFor(t, "mallory's record on "+name, 30*time.Second, func() bool { return x.has(t, "MALLORY record before her removal") })
	}
	testkit.WaitFor(t, "alice's record on mallory", 30*time.Second, func() bool { return m.has(t, "ALICE record mallory pulled") })

	if _, err := b.t.Remove(ctx, "@mallory/evil"); !errors.Is(err, ErrNotAdmin) {
		t.Fatalf("removal by a non-admin: %v, want ErrNotAdmin", err)
	}
	ch, err := a.t.Remove(ctx, "@mallory/evil")
	if err != nil || !ch.Changed || ch.Pos == 0 || ch.Device != m.r.Origin() {
		t.Fatalf("remove: %+v %v", ch, err)
	}
	if again, err := a.t.Remove(ctx, m.r.Origin()); err != nil || again.Changed {
		t.Fatalf("removing twice: %+v %v", again, err)
	}
	testkit.WaitForState(t, "mallory's node learns its removal", 10*time.Second, func() (bool, string) {
		st := m.status(t)
		return st.Removed && !st.Admitted, fmt.Sprintf("%+v", st)
	})

	// The operator's side: mallory's cluster user goes, a rolling restart reads the file.
	var rest []rqlitetest.User
	for _, u := range users() {
		if u.Username != "mallory" {
			rest = append(rest, u)
		}
	}
	c.SetUsers(rest)
	c.Nodes[0].Kill(t)
	c.Nodes[0].Restart(t)
	c.WaitLeader(t, 30*time.Second)
	if _, err := newRQ(c.URLs(), "mallory", testPassword, 3*time.Second).query(ctx, levelWeak, []stmt{st(`SELECT 1`)}); !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("mallory's rotated-out credentials: %v, want ErrUnauthorized", err)
	}

	// Mallory goes on through bob's credentials, with her key.
	bobs := newRQ(c.URLs(), "bob", testPassword, 3*time.Second)
	evil := rogue{m}
	tmpl := m.payloadOf(t, before)
	evil.writeVia(t, bobs, m.key, Op{Project: P, Kind: store.OpObservation, RecordID: "after-removal",
		Payload: edited(t, tmpl, "id", "after-removal", "title", "MALLORY record after her removal")})
	evil.writeVia(t, bobs, m.key, Op{Project: P, Kind: store.OpForget, RecordID: before, Payload: []byte(`{"v":1,"id":"` + before + `"}`)})
	a.record(t, P, "ALICE sentinel after the removal")

	// Damage on the way: every admission's payload nulled. A member joining now recovers
	// them (the names the devices signed, the hash the admin signed).
	if _, err := bobs.execute(ctx, []stmt{st(`UPDATE team_ops SET payload = NULL WHERE project = '' AND kind = 'member-add'`)}); err != nil {
		t.Fatal(err)
	}
	carol := newMember(t, "carol", "late")
	carol.join(t, c, P)
	carol.t.Start(ctx)
	cut := fmt.Sprintf("was removed from the team at position %d", ch.Pos)
	for name, x := range map[string]*member{"alice": a, "bob": b, "carol": carol} {
		testkit.WaitForState(t, name+" refuses the removed key's ops", 30*time.Second, func() (bool, string) {
			st := x.status(t)
			n := 0
			for _, r := range st.Refused {
				if r.Author == "mallory/evil" && strings.Contains(r.Reason, cut) {
					n++
				}
			}
			// alice, bob, carol: mallory is neither counted nor waiting to be admitted again.
			return n == 2 && x.has(t, "ALICE sentinel after the removal") && st.Members == 3 && len(st.Waiting) == 0, fmt.Sprintf("%+v", st)
		})
		if x.has(t, "MALLORY record after her removal") {
			t.Errorf("%s applied the removed key's record", name)
		}
		if !x.has(t, "MALLORY record before her removal") {
			t.Errorf("%s lost what mallory wrote before her removal", name)
		}
	}
	if names, err := a.t.Admit(ctx); err != nil || len(names) != 0 {
		t.Fatalf("the admin admitted %v (%v) after the removal", names, err)
	}
	if !m.has(t, "ALICE record mallory pulled") {
		t.Fatal("the removed member's copy lost what it pulled (nothing reaches it to erase it)")
	}
	if _, err := m.t.Remove(ctx, "@alice/laptop"); err == nil {
		t.Fatal("a removed member removed alice")
	}
}

package team

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTeamWideVerdictsFollowPositions judges membership ops the way every member does,
// from the log of the changes before each op's position alone: a name is one device's (a
// removed device's name included), a removed device is never admitted again, a device
// admitted twice under its name is a no-op, only an admin in force signs, and a device's
// ops count from its admission to its removal.
func TestTeamWideVerdictsFollowPositions(t *testing.T) {
	adminKey, admin := newKey(t)
	otherKey, other := newKey(t)
	_, alice := newKey(t)
	_, twin := newKey(t)
	log := adminLog{founders: []string{admin}}
	op := func(pos int64, signer string, kind, target, name string) Op {
		p, _ := json.Marshal(adminPayload{V: 1, Device: target, Name: name})
		o := Op{Pos: pos, Origin: signer, TSeq: uint64(pos), Project: adminStream, Kind: kind, RecordID: target, Payload: p, Author: "x/y"}
		key := adminKey
		if signer == other {
			key = otherKey
		}
		if err := sign(key, &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	apply := func(o Op) {
		log.entries = append(log.entries, adminEntry{pos: o.Pos, kind: o.Kind, target: o.RecordID, name: payloadName(o)})
	}
	for _, c := range []struct {
		op         Op
		want       string // substring of the refusal, "" accepted
		noop, keep bool
	}{
		{op: op(1, admin, kindMemberAdd, admin, "ann/admin"), keep: true},
		{op: op(2, admin, kindMemberAdd, alice, "alice/laptop"), keep: true},
		{op: op(3, admin, kindMemberAdd, alice, "alice/laptop"), noop: true},
		{op: op(4, admin, kindMemberAdd, twin, "alice/laptop"), want: "the name is held by device " + alice},
		{op: op(5, admin, kindMemberAdd, alice, "alice/phone"), want: `registered as "alice/laptop"`},
		{op: op(6, other, kindMemberAdd, other, "eve/x"), want: "who is not an admin"},
		{op: op(7, admin, kindMemberAdd, other, "bad name"), want: "names no user/device"},
		{op: op(8, admin, kindMemberRemove, alice, ""), keep: true},
		{op: op(9, admin, kindMemberAdd, alice, "alice/laptop"), want: "stays removed"},
		{op: op(10, admin, kindMemberAdd, twin, "alice/laptop"), want: "the name is held by device " + alice},
		{op: op(11, admin, kindMemberRemove, twin, ""), want: "not a registered team member"},
		{op: op(12, admin, kindMemberRemove, admin, ""), want: "without an admin"},
		{op: op(13, admin, kindAdminAdd, twin, ""), want: "not a registered team member"},
	} {
		reason, noop := checkAdminOp(c.op, log)
		if noop != c.noop || (c.want == "") != (reason == "") || !strings.Contains(reason, c.want) {
			t.Errorf("%s of %s at %d: %q noop=%v, want %q noop=%v", c.op.Kind, c.op.RecordID, c.op.Pos, reason, noop, c.want, c.noop)
		}
		if c.keep {
			apply(c.op)
		}
	}
	for _, c := range []struct {
		origin string
		pos    int64
		want   string
	}{
		{alice, 2, "not a registered team member"}, // at its own admission's position: not yet
		{alice, 3, ""},
		{alice, 8, ""}, // the removal's own position is its cut-off: ops after it
		{alice, 9, "removed from the team at position 8"},
		{twin, 20, "not a registered team member"},
	} {
		name, refusal := log.member(c.origin, c.pos)
		if !strings.Contains(refusal, c.want) || (c.want == "") != (refusal == "") || (c.want == "" && name != "alice/laptop") {
			t.Errorf("member %s at %d: %q %q, want refusal %q", c.origin, c.pos, name, refusal, c.want)
		}
	}
}

//go:build !memnode_lean

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/memnode/memnode/team"
)

// TestTeamStatusPrintsAdminsAndSquatsAsErrors: `memnode team status` lists the admins and
// gives every squatted op its own ERROR line with the cause.
func TestTeamStatusPrintsAdminsAndSquatsAsErrors(t *testing.T) {
	var b bytes.Buffer
	printTeamStatus(&b, team.Status{Joined: true, Name: "acme", User: "alice", Author: "alice/laptop", Reachable: true,
		Admins:   []string{"alice/laptop", "bob/desktop"},
		Squatted: []team.Squat{{Project: "ledger", TSeq: 7, Pos: 41, Error: "op 7 of ledger under this device's ID (cluster position 41) is not signed by this device"}}})
	out := b.String()
	for _, want := range []string{"admins:  @alice/laptop, @bob/desktop\n", "ERROR: op 7 of ledger under this device's ID (cluster position 41) is not signed by this device\n"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status lacks %q:\n%s", want, out)
		}
	}
}

// TestTeamStatusSaysWhatIsLeft: team status says how many ops are still to pull, and
// "unknown yet" before the cluster answered — never a 0 that means "not known".
func TestTeamStatusSaysWhatIsLeft(t *testing.T) {
	for lag, want := range map[int]string{-1: "to pull: unknown yet", 28000: "to pull: 28000 ops", 0: "to pull: 0 ops"} {
		var b strings.Builder
		printTeamStatus(&b, team.Status{Joined: true, Name: "acme", PullLag: lag, PushBacklog: 3})
		if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "to push: 3 ops") {
			t.Errorf("pull lag %d:\n%s", lag, b.String())
		}
	}
}

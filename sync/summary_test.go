package sync

import "testing"

// TestStatusSummary: the one line `memnode status` shows for the group, in each state.
func TestStatusSummary(t *testing.T) {
	me := PeerStatus{Name: "laptop", State: StateAlive, Self: true}
	for _, tc := range []struct {
		name string
		st   Status
		want string
	}{
		{"removed", Status{RemovedBy: "desk", Devices: []PeerStatus{me}},
			"removed from its group (told by desk); 'memnode peers leave' starts a new group"},
		{"alone", Status{Devices: []PeerStatus{me}},
			"on, not paired yet ('memnode peers invite' on this device, 'memnode peers join CODE' on another)"},
		{"two, one dead", Status{Devices: []PeerStatus{me, {Name: "desk", State: StateDead}}},
			"2 devices, 1 alive ('memnode peers' for details)"},
		{"catching up, a peer in error", Status{OpsHeld: 2000, OpsKnown: 30000,
			Devices: []PeerStatus{me, {Name: "desk", State: StateAlive, Error: "record refused"}, {Name: "nas", State: StateSuspect}}},
			"3 devices, 2 alive ('memnode peers' for details); catching up: 2000 of 30000 ops here; error with desk: record refused"},
	} {
		if got := tc.st.Summary(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

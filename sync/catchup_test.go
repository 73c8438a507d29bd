package sync

import (
	"testing"

	"github.com/memnode/memnode/store"
)

// TestCatchUpCounts: a device that holds 2,000 of the 30,000 ops its peers announced says
// so (not "nothing pending"), the counts take the highest sequence per origin over all
// peers, and a device that has everything shows held == known.
func TestCatchUpCounts(t *testing.T) {
	mine := store.VersionVector{"a": 1500, "b": 500}
	peerX := store.VersionVector{"a": 20000, "b": 500}
	peerY := store.VersionVector{"a": 18000, "b": 10000, "c": 0}
	held, known := catchUp(mine, []store.VersionVector{peerX, peerY})
	if held != 2000 || known != 30000 {
		t.Errorf("catchUp = %d of %d, want 2000 of 30000", held, known)
	}
	if held, known := catchUp(peerX, []store.VersionVector{mine}); held != known || held != 20500 {
		t.Errorf("caught up: %d of %d", held, known)
	}
	if held, known := catchUp(nil, nil); held != 0 || known != 0 {
		t.Errorf("empty: %d of %d", held, known)
	}
}

package node

import (
	"os"
	"testing"

	"github.com/memnode/memnode/internal/datadir"
)

// TestLockHolderOfRunningNode: the pid /proc/locks names for a started node's lock is ours.
func TestLockHolderOfRunningNode(t *testing.T) {
	n := readyNode(t, Config{Settings: testSettings()})
	pid, known := datadir.LockHolder(n.cfg.DataDir)
	if !known {
		t.Skip("no /proc/locks on this OS")
	}
	if want := os.Getpid(); pid != want {
		t.Fatalf("lock holder %d, want this process %d", pid, want)
	}
}

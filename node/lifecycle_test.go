package node

import (
	"os"
	"testing"
)

func TestLockHolder(t *testing.T) {
	locks := "1: FLOCK  ADVISORY  WRITE 4242 fe:00:5309723 0 EOF\n" +
		"1: -> FLOCK  ADVISORY  WRITE 77 fe:00:5309723 0 EOF\n" +
		"2: POSIX  ADVISORY  WRITE 99 fe:00:111 0 EOF\n" +
		"3: FLOCK  ADVISORY  WRITE 1234 00:2f:111 0 EOF\n"
	for ino, want := range map[uint64]int{5309723: 4242, 111: 1234, 5: 0} {
		if got := lockHolder(locks, ino); got != want {
			t.Errorf("inode %d: holder %d, want %d", ino, got, want)
		}
	}
}

// TestLockHolderOfRunningNode: the pid /proc/locks names for a started node's lock is ours.
func TestLockHolderOfRunningNode(t *testing.T) {
	n := readyNode(t, Config{Settings: testSettings()})
	pid, known := LockHolder(n.cfg.DataDir)
	if !known {
		t.Skip("no /proc/locks on this OS")
	}
	if want := os.Getpid(); pid != want {
		t.Fatalf("lock holder %d, want this process %d", pid, want)
	}
}

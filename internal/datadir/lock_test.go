package datadir

import (
	"slices"
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

func TestLockHolders(t *testing.T) {
	locks := "1: POSIX  ADVISORY  READ 300 fe:00:42 128 128\n" +
		"1: -> POSIX  ADVISORY  WRITE 301 fe:00:42 120 120\n" +
		"2: POSIX  ADVISORY  WRITE 300 fe:00:42 120 120\n" +
		"3: OFDLCK ADVISORY  READ -1 fe:00:42 0 EOF\n" +
		"4: OFDLCK ADVISORY  WRITE 302 fe:00:42 0 0\n" +
		"5: FLOCK  ADVISORY  WRITE 303 fe:00:42 0 EOF\n" +
		"6: POSIX  ADVISORY  WRITE 304 fe:00:7 0 EOF\n"
	got := LockHolders(locks, 42, "POSIX", "OFDLCK")
	if want := []int{300, 302}; !slices.Equal(got, want) {
		t.Fatalf("holders %v, want %v (waiters, OFD locks without a pid, other kinds and inodes left out; each pid once)", got, want)
	}
}

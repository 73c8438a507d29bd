package main

import (
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestWritesUntilGoneCountsTheLastWrites: the bytes a process wrote are counted up to its
// exit, its last writes included (scale's import figure counts the node's Close).
func TestWritesUntilGoneCountsTheLastWrites(t *testing.T) {
	c := exec.Command("dd", "if=/dev/zero", "of="+filepath.Join(t.TempDir(), "out"), "bs=1M", "count=8")
	if err := c.Start(); err != nil {
		t.Skip("no dd:", err)
	}
	got := writesUntilGone(c.Process.Pid, time.Minute)
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if got < 8<<20 {
		t.Fatalf("counted %d bytes written, want at least %d", got, 8<<20)
	}
}

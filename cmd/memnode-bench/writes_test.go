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

// TestWatchWritesCountsAProcessStoppedMeanwhile: watched before it is stopped (and gone
// before anyone polls again), a process's writes are still counted — as scale's import
// stops the node, which is not the bench's child, and reads its writes after.
func TestWatchWritesCountsAProcessStoppedMeanwhile(t *testing.T) {
	// The shell writes 8 MiB itself (printf is a builtin), then waits for its stdin to close.
	c := exec.Command("sh", "-c", `s=$(printf '%01048576d' 0); for i in 1 2 3 4 5 6 7 8; do printf '%s' "$s"; done > "$0"; cat >/dev/null`,
		filepath.Join(t.TempDir(), "out"))
	stdin, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Skip("no sh:", err)
	}
	// Once its writes are counted, watch it and stop it.
	deadline := time.Now().Add(time.Minute)
	for procWriteBytes(c.Process.Pid) < 8<<20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	exited := watchWrites(c.Process.Pid, time.Minute)
	stdin.Close()
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if got := exited(); got < 8<<20 {
		t.Fatalf("counted %d bytes written, want at least %d", got, 8<<20)
	}
	if got := writesUntilGone(c.Process.Pid, time.Minute); got != 0 {
		t.Fatalf("read %d bytes written of a process already gone; the watch must begin before it goes", got)
	}
}

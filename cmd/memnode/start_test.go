package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLastLogMsg: what `memnode start` quotes when a node is still not ready at the
// timeout — the msg of the last slog line this child wrote (after its offset), quoted or
// bare, and nothing from before the offset or from lines without one.
func TestLastLogMsg(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memnode.log")
	earlier := "time=2026-12-02T01:00:00Z level=INFO msg=\"node ready\" addr=127.0.0.1:1\n"
	mine := "time=2026-12-02T02:00:00Z level=INFO msg=\"schema migrated\" version=3\n" +
		"time=2026-12-02T02:00:01Z level=WARN msg=\"tcp listener off; serving the unix socket only\" err=\"port taken\"\n" +
		"panic: not a log line\n"
	if err := os.WriteFile(path, []byte(earlier+mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, want := lastLogMsg(path, int64(len(earlier))), "tcp listener off; serving the unix socket only"; got != want {
		t.Errorf("last msg %q, want %q", got, want)
	}
	if err := os.WriteFile(path, []byte(earlier+"time=x level=INFO msg=ready pid=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := lastLogMsg(path, int64(len(earlier))); got != "ready" {
		t.Errorf("bare msg %q, want ready", got)
	}
	if got := lastLogMsg(path, int64(len(earlier))+100); got != "" {
		t.Errorf("past the end: %q, want nothing", got)
	}
	if got := lastLogMsg(filepath.Join(t.TempDir(), "missing.log"), 0); got != "" {
		t.Errorf("missing log: %q", got)
	}
}

//go:build !memnode_lean

package main

import (
	"strings"
	"testing"
)

// TestImportProgressWritesLinesWhenNotATerminal: into a file or pipe the progress is one
// line per tenth done, with no carriage returns; on a terminal it is the redrawn bar.
func TestImportProgressWritesLinesWhenNotATerminal(t *testing.T) {
	var b strings.Builder
	p := &progress{w: &b, total: 100 * importBatch, lines: true}
	for range 100 {
		p.add(importBatch)
	}
	p.done()
	got := b.String()
	if strings.Contains(got, "\r") {
		t.Fatalf("progress into a file holds carriage returns:\n%q", got)
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 10 || !strings.HasSuffix(lines[9], "(100%)") || !strings.HasSuffix(lines[0], "(10%)") {
		t.Fatalf("progress into a file = %d lines, want one per tenth ending at 100%%:\n%s", len(lines), got)
	}

	b.Reset()
	bar := &progress{w: &b, total: 3 * importBatch}
	bar.add(importBatch)
	bar.done()
	if !strings.HasPrefix(b.String(), "\rimporting [") {
		t.Fatalf("progress on a terminal = %q, want the redrawn bar", b.String())
	}
}

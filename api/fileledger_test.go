package api

import (
	"fmt"
	"testing"
)

// TestFileLedgerOncePerSessionAndBounded: a (session, file) is new once; other sessions
// and files are independent; past maxLedgerEntries the oldest entries go first, so the
// ledger never grows beyond its bound.
func TestFileLedgerOncePerSessionAndBounded(t *testing.T) {
	var l fileLedger
	if !l.first("s1", "/a.go") || l.first("s1", "/a.go") || !l.has("s1", "/a.go") {
		t.Fatal("a file must be new once per session")
	}
	if !l.first("s2", "/a.go") || !l.first("s1", "/b.go") {
		t.Fatal("another session or file is new")
	}
	for i := range maxLedgerEntries {
		l.first("bulk", fmt.Sprint(i))
	}
	if len(l.seen) != maxLedgerEntries || len(l.order) != maxLedgerEntries {
		t.Fatalf("ledger holds %d keys (%d ordered), bound %d", len(l.seen), len(l.order), maxLedgerEntries)
	}
	if l.has("s1", "/a.go") || !l.has("bulk", fmt.Sprint(maxLedgerEntries-1)) {
		t.Fatal("the oldest entries must go first")
	}
	if !l.first("s1", "/a.go") {
		t.Fatal("an evicted entry is new again")
	}
}

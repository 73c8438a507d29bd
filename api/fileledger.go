package api

import "sync"

// maxLedgerEntries bounds the file-context ledger: at ~100 bytes an entry, ~1 MB at most.
const maxLedgerEntries = 10_000

// fileLedger remembers which files' history the file-context hook was given in which
// session, so a file's history is injected once per session (claude-mem keeps the same
// ledger). It lives in the node because every hook is a process of its own; it is bounded
// (the oldest entries go first) and not persisted: after a node restart a file's history
// may be shown once more. The zero value is ready.
type fileLedger struct {
	mu    sync.Mutex
	seen  map[string]struct{}
	order []string // keys in insertion order, for eviction
	head  int      // index in order of the oldest live key
}

// first reports whether (session, path) is new, and remembers it.
func (l *fileLedger) first(session, path string) bool {
	k := session + "\x00" + path
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.seen[k]; ok {
		return false
	}
	if l.seen == nil {
		l.seen = map[string]struct{}{}
	}
	if len(l.seen) >= maxLedgerEntries {
		delete(l.seen, l.order[l.head])
		l.order[l.head] = k
		l.head = (l.head + 1) % len(l.order)
	} else {
		l.order = append(l.order, k)
	}
	l.seen[k] = struct{}{}
	return true
}

// has reports whether (session, path) was remembered.
func (l *fileLedger) has(session, path string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.seen[session+"\x00"+path]
	return ok
}

package replica

import (
	"context"
	"fmt"
	"github.com/memnode/memnode/store"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// After a burst of events the queue's WAL used to keep its peak size (up to 64 MiB) for as
// long as the node ran. Once the queue is drained and quiet, the WAL is truncated.
func TestQueueWALIsTruncatedWhenIdle(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a", QueueIdle: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	wal := QueuePath(path) + "-wal"
	walSize := func() int64 {
		st, err := os.Stat(wal)
		if os.IsNotExist(err) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}

	payload := []byte(`{"tool_response":"` + strings.Repeat("x", 4096) + `"}`)
	const events = 1000
	for i := range events {
		if _, err := r.Enqueue(ctx, store.PendingEvent{EventID: fmt.Sprintf("ev-%d", i), Kind: "observation",
			SessionID: fmt.Sprintf("s%d", i%10), Project: "p", Payload: payload}); err != nil {
			t.Fatal(err)
		}
	}
	peak := walSize()
	if peak < 2<<20 {
		t.Fatalf("queue WAL is %d bytes after %d events of 4 KiB: the test did not grow it", peak, events)
	}
	// The worker drains the queue: claim, commit, delete.
	for {
		c, err := r.ClaimSession(ctx, 500)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Events) == 0 {
			break
		}
		b := &store.Batch{}
		for _, e := range c.Events {
			b.Done = append(b.Done, e.ID)
			b.DoneEvents = append(b.DoneEvents, e.EventID)
		}
		if _, err := r.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		r.Unclaim(c.SessionID)
	}
	if n, _ := r.QueueDepth(ctx); n != 0 {
		t.Fatalf("queue depth %d after draining", n)
	}
	for deadline := time.Now().Add(10 * time.Second); walSize() != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("queue WAL still %d bytes 10 s after the queue was drained", walSize())
		}
	}
	t.Logf("queue WAL: %d bytes at the peak, 0 once drained and idle", peak)

	// The queue still works after the truncation.
	if dup, err := r.Enqueue(ctx, store.PendingEvent{EventID: "after", Kind: "observation", SessionID: "s", Project: "p", Payload: []byte("{}")}); err != nil || dup {
		t.Fatalf("enqueue after truncation: dup %v, %v", dup, err)
	}
	if n, _ := r.QueueDepth(ctx); n != 1 {
		t.Fatalf("queue depth %d, want 1", n)
	}
}

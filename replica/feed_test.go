package replica

import (
	"context"
	"github.com/memnode/memnode/store"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/memory"
)

// openFeedTest opens a replica that publishes to a fresh bus, and subscribes to it.
func openFeedTest(tb testing.TB, origin string) (*Replica, *feed.Subscription) {
	tb.Helper()
	bus := feed.New()
	r, err := Open(context.Background(), Config{Path: filepath.Join(tb.TempDir(), "memnode.db"), Origin: origin, Feed: bus})
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	sub := bus.Subscribe(0)
	tb.Cleanup(func() {
		sub.Close()
		r.Close()
		bus.Close()
	})
	return r, sub
}

// takeOne returns the one change published since the last call; the publish happens before
// the write returns, so no waiting is involved.
func takeOne(tb testing.TB, sub *feed.Subscription) feed.Change {
	tb.Helper()
	ch, overflowed := sub.Take()
	if overflowed || len(ch) != 1 {
		tb.Fatalf("want exactly one change, got %d (overflowed %v): %+v", len(ch), overflowed, ch)
	}
	return ch[0]
}

func TestFeedPublishesEveryCommitOnce(t *testing.T) {
	ctx := context.Background()
	a, subA := openFeedTest(t, "dev-a")
	b, subB := openFeedTest(t, "dev-b")
	now := time.Now().UnixMilli()

	// A local commit: its records, its origin, and that it appended local ops.
	res, err := a.Commit(ctx, &store.Batch{
		Sessions:     []memory.Session{{ID: "s1", Project: "demo", StartedAt: now}},
		Prompts:      []memory.Prompt{{SessionID: "s1", Project: "demo", PromptNumber: 1, Text: "fix login", CreatedAt: now}},
		Observations: []memory.Observation{{SessionID: "s1", Project: "demo", Type: "bugfix", Title: "Fixed the login", CreatedAt: now}},
		Summaries:    []memory.Summary{{SessionID: "s1", Project: "demo", Request: "fix login", CreatedAt: now}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := takeOne(t, subA)
	want := feed.Change{Seq: c.Seq, At: c.At, Origin: feed.Local, Sessions: []string{"s1"},
		Prompts: []string{res.Prompts[0].ID}, Observations: []string{res.Observations[0].ID},
		Summaries: []string{res.Summaries[0].ID}, LocalOps: true}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("local commit published\n %+v\nwant\n %+v", c, want)
	}

	// A batch that stores nothing new (a retried batch) publishes nothing.
	if _, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s1", Project: "demo", Type: "bugfix", Title: "Fixed the login", CreatedAt: now}}}); err != nil {
		t.Fatal(err)
	}
	if ch, _ := subA.Take(); len(ch) != 0 {
		t.Fatalf("a commit that stored nothing published %+v", ch)
	}

	// A sync apply on b: device origin, the applied records, no local ops.
	ops, err := a.OpsSince(ctx, "dev-a", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ApplyOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	c = takeOne(t, subB)
	if c.Origin != feed.Device || c.LocalOps || !reflect.DeepEqual(c.Observations, want.Observations) ||
		!reflect.DeepEqual(c.Sessions, want.Sessions) || !reflect.DeepEqual(c.Summaries, want.Summaries) {
		t.Fatalf("sync apply published %+v", c)
	}
	// Applying the same ops again changes nothing and publishes nothing.
	if _, err := b.ApplyOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	if ch, _ := subB.Take(); len(ch) != 0 {
		t.Fatalf("duplicate ops published %+v", ch)
	}

	// An import: import origin; its ops are this device's, so sync pushes them.
	imp := store.ImportID(now, "claude-mem:1")
	if _, err := b.Import(ctx, &store.ImportBatch{Observations: []memory.Observation{{ID: imp, SessionID: "old", Project: "demo",
		Type: "discovery", Title: "Imported", CreatedAt: now}}}); err != nil {
		t.Fatal(err)
	}
	c = takeOne(t, subB)
	if c.Origin != feed.Import || !c.LocalOps || !reflect.DeepEqual(c.Observations, []string{imp}) {
		t.Fatalf("import published %+v", c)
	}

	// A forget: the forgotten IDs; and once its op reaches a, a publishes them too.
	obsID := res.Observations[0].ID
	if _, err := b.Forget(ctx, []string{obsID}); err != nil {
		t.Fatal(err)
	}
	c = takeOne(t, subB)
	if c.Origin != feed.Local || !c.LocalOps || !reflect.DeepEqual(c.Forgotten, []string{obsID}) {
		t.Fatalf("forget published %+v", c)
	}
	fops, err := b.OpsSince(ctx, "dev-b", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ApplyOps(ctx, fops); err != nil {
		t.Fatal(err)
	}
	c = takeOne(t, subA)
	if c.Origin != feed.Device || !reflect.DeepEqual(c.Forgotten, []string{obsID}) || !reflect.DeepEqual(c.Observations, []string{imp}) {
		t.Fatalf("applied forget published %+v", c)
	}

	// Device names replicate and are published; derived vectors are not a change.
	if err := a.SetDeviceName(ctx, "dev-a", "laptop"); err != nil {
		t.Fatal(err)
	}
	if c = takeOne(t, subA); !reflect.DeepEqual(c.Devices, []string{"dev-a"}) || !c.LocalOps {
		t.Fatalf("device name published %+v", c)
	}
	src, err := a.MissingVectors(ctx, "m", 10)
	if err != nil || len(src) == 0 {
		t.Fatalf("missing vectors: %v %v", src, err)
	}
	if _, err := a.PutVectors(ctx, "m", []store.VectorRow{{RowID: src[0].RowID, ID: src[0].ID, Dim: 1, Blob: []byte{0, 0, 128, 63}}}); err != nil {
		t.Fatal(err)
	}
	if ch, _ := subA.Take(); len(ch) != 0 {
		t.Fatalf("storing vectors published %+v", ch)
	}
}

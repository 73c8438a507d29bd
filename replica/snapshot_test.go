package replica_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// takeSnapshot reads src's snapshot into memory, in chunks of about chunkBytes.
func takeSnapshot(tb testing.TB, src *replica.Replica, chunkBytes int) []store.SnapshotChunk {
	var chunks []store.SnapshotChunk
	if err := src.Snapshot(context.Background(), store.SnapshotCursor{}, chunkBytes, func(c store.SnapshotChunk) error {
		chunks = append(chunks, c)
		return nil
	}); err != nil {
		tb.Fatalf("snapshot: %v", err)
	}
	return chunks
}

// feedChunks is an InstallSnapshot source over chunks; after failAfter chunks (if ≥ 0) it
// fails as a cut connection does.
func feedChunks(chunks []store.SnapshotChunk, failAfter int) func() (store.SnapshotChunk, error) {
	i := 0
	return func() (store.SnapshotChunk, error) {
		if i == failAfter || i >= len(chunks) {
			return store.SnapshotChunk{}, errors.New("connection reset")
		}
		i++
		return chunks[i-1], nil
	}
}

// TestCRDTSnapshotThenChaos: histories as in TestCRDTCompactionNeverLosesAState (writes,
// forgets, renames, compaction, partial exchanges); at the end of the history — a random
// point of the group's life, the origins not yet equal — a new device installs a snapshot
// of a random origin (in chunks of random size) and must then equal that origin exactly, vector
// included. Then every op travels under the chaos schedule to the origins and to the
// snapshot-started device, and a fourth device is fed only by op replay from the
// snapshot-started one (it serves ops it never applied one by one): all end equal, and
// nothing forgotten comes back.
func TestCRDTSnapshotThenChaos(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, t, rapid.IntRange(2, 3).Draw(rt, "origins"))
		defer w.close()
		newCompactionWorld(w)
		w.run()
		src := w.origins[rapid.IntRange(0, len(w.origins)-1).Draw(rt, "snapshot source")]
		s := w.fresh("snap-device")
		if _, err := s.ApplyOps(w.ctx, nil); err != nil {
			rt.Fatal(err)
		}
		chunks := takeSnapshot(t, src, rapid.IntRange(1, 4096).Draw(rt, "chunk bytes"))
		if _, err := s.InstallSnapshot(w.ctx, feedChunks(chunks, -1)); err != nil {
			rt.Fatalf("install: %v", err)
		}
		if got, want := w.dump(s), w.dump(src); got != want {
			rt.Fatalf("installed snapshot differs from its source:\n%s\n---\n%s", want, got)
		}
		vs, _ := s.VersionVector(w.ctx)
		vsrc, _ := src.VersionVector(w.ctx)
		maps.DeleteFunc(vsrc, func(_ string, s uint64) bool { return s == 0 }) // an entry of 0 says nothing
		if !maps.Equal(vs, vsrc) {
			rt.Fatalf("installed vector %v, source's %v", vs, vsrc)
		}
		w.chaosThenEqual(s)
	})
}

// chaosThenEqual delivers every op under the chaos schedule to the origins and to the
// snapshot-started device s, feeds a further device only by op replay from s, and checks that
// s, that device and the origins are equal, with nothing forgotten back.
func (w *world) chaosThenEqual(s *replica.Replica) {
	all := w.allOps()
	for k, r := range w.origins {
		w.deliverChaos(r, all, fmt.Sprintf("origin %d", k))
	}
	w.deliverChaos(s, all, "snapshot device")
	d := w.fresh("relay-device")
	w.deliverChaos(d, w.held(s), "device fed by the snapshot device")
	want := w.dump(w.origins[0])
	for name, r := range map[string]*replica.Replica{"snapshot device": s, "relay device": d, "origin 1": w.origins[1]} {
		if got := w.dump(r); got != want {
			w.t.Fatalf("%s differs from origin 0:\n%s\n---\n%s", name, want, got)
		}
		w.checkForgotten(r, name)
	}
}

// TestCRDTSnapshotCutAndResumed: histories as in TestCRDTSnapshotThenChaos; a new device
// installs a snapshot that is cut at random chunk boundaries, each time resumed from its
// cursor with a snapshot of a random origin (so the parts come from different vectors), the
// history going on between the cuts (writes, forgets, compaction) and some ops reaching the
// device by op replay meanwhile (a forget among them must win over rows still to come).
// While cut, the device claims nothing of another origin beyond what op replay gave it and
// serves no snapshot. Then every op travels under the chaos schedule: the device, a device
// fed only from it by op replay, and the origins all end equal, nothing forgotten back.
func TestCRDTSnapshotCutAndResumed(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, t, rapid.IntRange(2, 3).Draw(rt, "origins"))
		defer w.close()
		newCompactionWorld(w)
		w.run()
		s := w.fresh("snap-device")
		for cuts := rapid.IntRange(1, 4).Draw(rt, "cuts"); ; cuts-- {
			src := w.origins[rapid.IntRange(0, len(w.origins)-1).Draw(rt, "snapshot source")]
			prog, err := s.SnapshotProgress(w.ctx)
			if err != nil {
				rt.Fatal(err)
			}
			var chunks []store.SnapshotChunk
			if err := src.Snapshot(w.ctx, prog.From, rapid.IntRange(1, 4096).Draw(rt, "chunk bytes"), func(c store.SnapshotChunk) error {
				chunks = append(chunks, c)
				return nil
			}); err != nil {
				rt.Fatal(err)
			}
			if cuts == 0 {
				if _, err := s.InstallSnapshot(w.ctx, feedChunks(chunks, -1)); err != nil {
					rt.Fatalf("install: %v", err)
				}
				break
			}
			before, _ := s.VersionVector(w.ctx)
			if _, err := s.InstallSnapshot(w.ctx, feedChunks(chunks, rapid.IntRange(1, len(chunks)-1).Draw(rt, "cut after"))); err == nil {
				rt.Fatal("an install cut before its end succeeded")
			}
			if after, _ := s.VersionVector(w.ctx); !maps.Equal(before, after) {
				rt.Fatalf("a cut install moved the vector from %v to %v", before, after)
			}
			if err := s.Snapshot(w.ctx, store.SnapshotCursor{}, 4096, func(store.SnapshotChunk) error { return nil }); !errors.Is(err, store.ErrSnapshotIncomplete) {
				rt.Fatalf("a half-installed device served a snapshot: %v", err)
			}
			w.run()
			if ops := w.held(w.origins[rapid.IntRange(0, len(w.origins)-1).Draw(rt, "replay from")]); len(ops) > 0 {
				w.applyInBatches(s, ops[:rapid.IntRange(0, len(ops)).Draw(rt, "replayed meanwhile")], "meanwhile")
			}
		}
		w.chaosThenEqual(s)
	})
}

// TestSnapshotInstallResumesAfterACut: a source that fails in the middle (a cut connection)
// leaves the receiver with the chunks it committed and a cursor after them, but a vector
// that claims nothing of the source, and no snapshot to serve; a snapshot taken from that
// cursor completes it, and together the two parts are the source's state. A replica that
// holds something refuses a snapshot.
func TestSnapshotInstallResumesAfterACut(t *testing.T) {
	ctx := context.Background()
	a := openPlain(t, "dev-a")
	now := time.Now().UnixMilli()
	for i := range 30 {
		if _, err := a.Commit(ctx, &store.Batch{
			Sessions:     []memory.Session{{ID: fmt.Sprintf("s%d", i%3), Project: "p", StartedAt: now}},
			Observations: []memory.Observation{{SessionID: fmt.Sprintf("s%d", i%3), Project: "p", Type: "change", Title: fmt.Sprintf("zebraword %d", i), CreatedAt: now, FilesRead: []string{"dir/main.go"}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	chunks := takeSnapshot(t, a, 512)
	if len(chunks) < 6 {
		t.Fatalf("%d chunks: the test needs a snapshot of several", len(chunks))
	}
	c := openPlain(t, "dev-c")
	if err := c.SetDeviceName(ctx, "dev-c", "laptop"); err != nil { // what a node does at its first start
		t.Fatal(err)
	}
	first, err := c.InstallSnapshot(ctx, feedChunks(chunks, len(chunks)/2))
	if err == nil {
		t.Fatal("install from a source cut in the middle succeeded")
	}
	if first.Records == 0 {
		t.Fatalf("a cut in the middle kept %+v: want the chunks before it", first)
	}
	if vv, _ := c.VersionVector(ctx); vv["dev-a"] != 0 {
		t.Fatalf("after a cut install the vector claims %v", vv)
	}
	prog, err := c.SnapshotProgress(ctx)
	if err != nil || !prog.Active || prog.Rows == 0 || prog.Rows >= prog.Total || prog.From.Table == "" {
		t.Fatalf("progress after a cut: %+v, %v; want active, some rows of the total, a cursor", prog, err)
	}
	// Chunks are installed in batches of several; a cut still keeps every row that arrived.
	arrived := 0
	for _, ch := range chunks[:len(chunks)/2] {
		arrived += len(ch.Rows)
	}
	if prog.Rows != int64(arrived) {
		t.Fatalf("a cut kept %d rows of the %d that arrived before it", prog.Rows, arrived)
	}
	if err := c.Snapshot(ctx, store.SnapshotCursor{}, 512, func(store.SnapshotChunk) error { return nil }); !errors.Is(err, store.ErrSnapshotIncomplete) {
		t.Fatalf("a half-installed replica served a snapshot: %v", err)
	}
	var rest []store.SnapshotChunk
	if err := a.Snapshot(ctx, prog.From, 512, func(ch store.SnapshotChunk) error { rest = append(rest, ch); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(rest) >= len(chunks) {
		t.Fatalf("the snapshot from the cursor has %d chunks, the whole one %d", len(rest), len(chunks))
	}
	res, err := c.InstallSnapshot(ctx, feedChunks(rest, -1))
	if err != nil {
		t.Fatal(err)
	}
	res.Ops += first.Ops
	res.Records += first.Records
	if prog, _ := c.SnapshotProgress(ctx); prog.Active {
		t.Fatalf("progress after the install: %+v", prog)
	}
	// 30 observation ops and 30 session ops; 30 observations and 3 sessions.
	if res.Ops != 60 || res.Records != 33 {
		t.Fatalf("installed %+v, want 60 ops and 33 records", res)
	}
	if got, want := withoutDevice(mustDump(t, c), "dev-c"), mustDump(t, a); got != want {
		t.Fatalf("installed state differs from the source's:\n%s\n---\n%s", want, got)
	}
	if vv, _ := c.VersionVector(ctx); vv["dev-a"] != 60 || vv["dev-c"] != 1 {
		t.Fatalf("vector after install %v, want dev-a 60 and its own dev-c 1", vv)
	}
	// Search and the file index work on what came by snapshot.
	if n, err := c.CountMatches(ctx, store.OpObservation, "zebraword", 100); err != nil || n != 30 {
		t.Fatalf("FTS finds %d snapshot records (%v), want 30", n, err)
	}
	if _, err := c.InstallSnapshot(ctx, feedChunks(chunks, -1)); !errors.Is(err, store.ErrNotBlank) {
		t.Fatalf("second install: %v, want ErrNotBlank", err)
	}
	// c serves a new device by op replay: d equals a.
	d := openPlain(t, "dev-d")
	vv, _ := c.VersionVector(ctx)
	for o := range vv {
		ops, err := c.OpsSince(ctx, o, 0, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.ApplyOps(ctx, ops); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := mustDump(t, d), mustDump(t, c); got != want {
		t.Fatalf("device fed by the snapshot device differs:\n%s\n---\n%s", want, got)
	}
}

// withoutDevice drops origin's device row from a dump.
func withoutDevice(dump, origin string) string {
	var keep []string
	for _, l := range strings.SplitAfter(dump, "\n") {
		if !strings.HasPrefix(l, "device\t"+origin+"\t") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// TestSnapshotInstallIsPublishedAndFollowsTheRules: the install's changes on the feed
// (one per chunk) name every record it stored (so embeddings, FTS consumers and the viewer catch up);
// records of a local-only project never travel; a removed origin's ops past the receiver's
// cut are dropped with what they wrote; a stamp beyond the clock bound refuses its chunk.
func TestSnapshotInstallIsPublishedAndFollowsTheRules(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UnixMilli()
	a, err := replica.Open(ctx, replica.Config{Path: t.TempDir() + "/a.db", Origin: "dev-a", LocalOnly: func(p string) bool { return p == "secret" }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var kept []string // the shared observations the install must announce
	secret := ""
	for i, project := range []string{"p", "secret", "p"} {
		res, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s", Project: project, Type: "change", Title: fmt.Sprintf("obs %d", i), CreatedAt: now}}})
		if err != nil {
			t.Fatal(err)
		}
		if project == "p" {
			kept = append(kept, res.Observations[0].ID)
		} else {
			secret = res.Observations[0].ID
		}
	}
	x := openPlain(t, "dev-x") // a device removed after its first op
	for i := range 3 {
		res, err := x.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "sx", Project: "p", Type: "change", Title: fmt.Sprintf("x %d", i), CreatedAt: now}}})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			kept = append(kept, res.Observations[0].ID) // dev-x's op up to its cut travels
		}
	}
	if _, err := a.ApplyOps(ctx, allOpsOf(t, x)); err != nil {
		t.Fatal(err)
	}
	chunks := takeSnapshot(t, a, 1<<20)

	c, bus := testkit.OpenReplicaWithFeed(t, "dev-c")
	sub := bus.Subscribe(0)
	defer sub.Close()
	if _, err := c.CutOrigin(ctx, "dev-x", 1); err != nil {
		t.Fatal(err)
	}
	sub.Take()
	res, err := c.InstallSnapshot(ctx, feedChunks(chunks, -1))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cut != 2 {
		t.Fatalf("install %+v, want the 2 ops of dev-x past its cut dropped", res)
	}
	changes, _ := sub.Take()
	var got []string
	for _, ch := range changes {
		if ch.Origin != feed.Device {
			t.Fatalf("feed after install: %+v, want changes from a device", changes)
		}
		got = append(got, ch.Observations...)
	}
	for _, id := range kept {
		if !slices.Contains(got, id) {
			t.Errorf("feed names observations %v, without %s: want a's 2 shared ones and dev-x's first", got, id)
		}
	}
	if slices.Contains(got, secret) {
		t.Errorf("feed names the local-only observation %s: %v", secret, got)
	}
	d := mustDump(t, c)
	if strings.Contains(d, "obs 1") || !strings.Contains(d, "obs 0") || !strings.Contains(d, "obs 2") {
		t.Fatalf("installed dump: want a's two shared observations and not the local-only one:\n%s", d)
	}
	if !strings.Contains(d, "x 0") || strings.Contains(d, "x 1") || strings.Contains(d, "x 2") {
		t.Fatalf("installed dump: want dev-x's op up to its cut only:\n%s", d)
	}
	if vv, _ := c.VersionVector(ctx); vv["dev-x"] != 1 || vv["dev-a"] != 2 {
		t.Fatalf("vector %v, want dev-x at its cut 1 and dev-a at 2", vv)
	}

	// A clock far ahead: the chunk is refused, nothing of it stored; abandoned, the
	// install leaves the replica to op replay.
	late := openPlain(t, "dev-late")
	ahead, err := replica.Open(ctx, replica.Config{Path: t.TempDir() + "/f.db", Origin: "dev-f", Now: func() time.Time { return time.Now().Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer ahead.Close()
	if _, err := ahead.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "sf", Project: "p", Type: "change", Title: "future", CreatedAt: now}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := late.InstallSnapshot(ctx, feedChunks(takeSnapshot(t, ahead, 1<<20), -1)); !errors.Is(err, memory.ErrClockAhead) {
		t.Fatalf("snapshot stamped an hour ahead: %v, want ErrClockAhead", err)
	}
	if blank, _ := late.IsBlank(ctx); !blank {
		t.Fatal("a refused chunk left rows behind")
	}
	if err := late.AbandonSnapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if prog, _ := late.SnapshotProgress(ctx); prog.Active {
		t.Fatalf("progress after abandoning: %+v", prog)
	}
}

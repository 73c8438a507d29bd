package replica

import (
	"bytes"
	"context"
	"github.com/memnode/memnode/store"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

// openTest opens a replica on a real SQLite file in a temp dir.
func openTest(tb testing.TB, origin string) *Replica {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "memnode.db")
	PlaceMigrated(tb, path)
	r, err := Open(context.Background(), Config{Path: path, Origin: origin})
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

func TestCommitAppendsOpsAndDedups(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	now := time.Now().UnixMilli()
	b := &store.Batch{
		Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: now}},
		Prompts:  []memory.Prompt{{SessionID: "s1", Project: "demo", PromptNumber: 1, Text: "fix the login bug", CreatedAt: now}},
		Observations: []memory.Observation{
			{SessionID: "s1", Project: "demo", Type: "bugfix", Title: "Fix expired JWT in middleware.go", FilesModified: []string{"internal/auth/middleware.go"}, CreatedAt: now},
			{SessionID: "s1", Project: "demo", Type: "bugfix", Title: "Fix expired JWT in middleware.go", FilesModified: []string{"internal/auth/middleware.go"}, CreatedAt: now},
		},
	}
	res, err := r.Commit(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Observations) != 1 || res.Duplicates != 1 {
		t.Fatalf("want 1 stored + 1 duplicate, got %d + %d", len(res.Observations), res.Duplicates)
	}
	vv, err := r.VersionVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if vv["dev-a"] != 3 {
		t.Fatalf("version vector = %v, want dev-a:3 (session, prompt, observation)", vv)
	}
	ops, err := r.OpsSince(ctx, "dev-a", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, op := range ops {
		if op.Seq != uint64(i+1) {
			t.Fatalf("op %d has seq %d: seqs must be contiguous", i, op.Seq)
		}
		if i > 0 && op.HLC <= ops[i-1].HLC {
			t.Fatalf("HLC not increasing: %d then %d", ops[i-1].HLC, op.HLC)
		}
	}
	byFile, err := r.ObservationsByFile(ctx, "demo", []string{"internal/auth/middleware.go"}, 10)
	if err != nil || len(byFile) != 1 {
		t.Fatalf("by file: %v %v", byFile, err)
	}
}

func TestApplyOpsConvergesAndForgetPurges(t *testing.T) {
	ctx := context.Background()
	a, b := openTest(t, "dev-a"), openTest(t, "dev-b")
	now := time.Now().UnixMilli()
	res, err := a.Commit(ctx, &store.Batch{
		Sessions:     []memory.Session{{ID: "s1", Project: "demo", StartedAt: now}},
		Observations: []memory.Observation{{SessionID: "s1", Project: "demo", Type: "discovery", Title: "Found the secret sauce", Narrative: "sauce-recipe-42", CreatedAt: now}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ops, _ := a.OpsSince(ctx, "dev-a", 0, 100)
	// Deliver twice and out of order: duplicates and gaps must not corrupt b.
	if r, err := b.ApplyOps(ctx, []store.Op{ops[1]}); err != nil || r.Gaps != 1 {
		t.Fatalf("gap not detected: %+v %v", r, err)
	}
	if _, err := b.ApplyOps(ctx, append(ops, ops...)); err != nil {
		t.Fatal(err)
	}
	da, _ := a.CanonicalDump(ctx)
	db, _ := b.CanonicalDump(ctx)
	if da != db {
		t.Fatalf("replicas differ:\n%s\n---\n%s", da, db)
	}
	// Forget on b; a gets the tombstone; the content is gone from both, op-log included.
	if n, err := b.Forget(ctx, []string{res.Observations[0].ID}); err != nil || n != 1 {
		t.Fatalf("forget: %d %v", n, err)
	}
	bops, _ := b.OpsSince(ctx, "dev-b", 0, 100)
	if _, err := a.ApplyOps(ctx, bops); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Replica{a, b} {
		if has, _ := r.OpPayloadContains(ctx, "sauce-recipe-42"); has {
			t.Fatal("forgotten content still in the op-log")
		}
		dump, _ := r.CanonicalDump(ctx)
		if strings.Contains(dump, "sauce") {
			t.Fatalf("forgotten content still in the tables:\n%s", dump)
		}
	}
	// A late copy of the original op can never resurrect the record.
	c := openTest(t, "dev-c")
	if _, err := c.ApplyOps(ctx, bops); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ApplyOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	dc, _ := c.CanonicalDump(ctx)
	if strings.Contains(dc, "sauce") {
		t.Fatal("a forgotten record came back")
	}
}

func TestQueueClaimOrderAndRecovery(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	for i, sid := range []string{"s1", "s2", "s1"} {
		dup, err := r.Enqueue(ctx, store.PendingEvent{EventID: string(rune('a' + i)), Kind: "observation", SessionID: sid, Project: "p", Payload: []byte("{}")})
		if err != nil || dup {
			t.Fatalf("enqueue: %v %v", dup, err)
		}
	}
	if dup, _ := r.Enqueue(ctx, store.PendingEvent{EventID: "a", SessionID: "s1", Payload: []byte("{}")}); !dup {
		t.Fatal("same event id must be a duplicate")
	}
	got, err := r.ClaimSession(ctx, 10)
	if err != nil || len(got.Events) != 2 || got.Events[0].EventID != "a" || got.Events[1].EventID != "c" {
		t.Fatalf("claim s1: %+v %v", got, err)
	}
	// s1 is claimed: the next claim must take s2, never s1 again.
	got2, _ := r.ClaimSession(ctx, 10)
	if len(got2.Events) != 1 || got2.SessionID != "s2" {
		t.Fatalf("claim s2: %+v", got2)
	}
	if got3, _ := r.ClaimSession(ctx, 10); len(got3.Events) != 0 {
		t.Fatalf("both sessions are claimed, yet got %+v", got3)
	}
	r.Unclaim("s2")
	if got4, _ := r.ClaimSession(ctx, 10); got4.SessionID != "s2" {
		t.Fatalf("s2 unclaimed: want it back, got %+v", got4)
	}
	if _, err := r.Commit(ctx, &store.Batch{Done: []int64{got.Events[0].ID}, DoneEvents: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if dup, _ := r.Enqueue(ctx, store.PendingEvent{EventID: "a", SessionID: "s1", Payload: []byte("{}")}); !dup {
		t.Fatal("an event already stored must be a duplicate when replayed")
	}
}

// TestQueueRowOutlivingItsCommitIsDropped covers a crash between a worker's commit and the
// removal of its queue rows: the event must not be processed twice.
func TestQueueRowOutlivingItsCommitIsDropped(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	if _, err := r.Enqueue(ctx, store.PendingEvent{EventID: "e1", Kind: "observation", SessionID: "s1", Project: "p", Payload: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	c, err := r.ClaimSession(ctx, 10)
	if err != nil || len(c.Events) != 1 {
		t.Fatalf("claim: %+v %v", c, err)
	}
	// The records commit (with the event ID) but the queue cleanup never runs.
	if _, err := r.Commit(ctx, &store.Batch{DoneEvents: []string{"e1"}}); err != nil {
		t.Fatal(err)
	}
	r.Unclaim("s1")
	if n, _ := r.QueueDepth(ctx); n != 1 {
		t.Fatalf("queue depth = %d, want the leftover row", n)
	}
	c, err = r.ClaimSession(ctx, 10)
	if err != nil || len(c.Events) != 0 {
		t.Fatalf("a stored event was handed out again: %+v %v", c, err)
	}
	if n, _ := r.QueueDepth(ctx); n != 0 {
		t.Fatalf("queue depth = %d, want the leftover dropped", n)
	}
	if dup, _ := r.Enqueue(ctx, store.PendingEvent{EventID: "e1", SessionID: "s1", Payload: []byte("{}")}); !dup {
		t.Fatal("a replay of a stored event must be a duplicate")
	}
}

// TestForgottenTextLeavesTheFile: whichever way a record is forgotten (Forget, a tombstone
// in an import, a forget op from another device), its text is overwritten in the database
// file, not only unlinked, and its words are gone from the full-text index: a word only it
// had (in an index segment older than the forget, another commit came after it) is in
// neither file — FTS5's secure-delete (schema v12) removes it from the segment, without
// rewriting the whole index.
func TestForgottenTextLeavesTheFile(t *testing.T) {
	ctx := context.Background()
	for name, forget := range map[string]func(t *testing.T, r *Replica, id string) error{
		"forget": func(_ *testing.T, r *Replica, id string) error {
			_, err := r.Forget(ctx, []string{id})
			return err
		},
		"import": func(_ *testing.T, r *Replica, id string) error {
			_, err := r.Import(ctx, &store.ImportBatch{Tombstones: []string{id}})
			return err
		},
		"apply": func(t *testing.T, r *Replica, id string) error {
			other := openTest(t, "dev-b")
			ops, _ := r.OpsSince(ctx, "dev-a", 0, 100)
			if _, err := other.ApplyOps(ctx, ops); err != nil {
				return err
			}
			if _, err := other.Forget(ctx, []string{id}); err != nil {
				return err
			}
			forgets, _ := other.OpsSince(ctx, "dev-b", 0, 100)
			_, err := r.ApplyOps(ctx, forgets)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "memnode.db")
			r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			secret := "wombat-" + name + "-secret"
			// Longer than a page: the text lands on overflow pages, which a plain delete
			// only moves to the freelist.
			word := "zqxjwombat" + name // one token, sorted last: its bytes stand in its index leaf
			res, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s1", Project: "p", Type: "change",
				Title: "t " + word, Narrative: strings.Repeat(secret+" ", 1000), CreatedAt: 1,
				FilesModified: []string{"internal/" + secret + ".go", "internal/shared.go"}}}})
			if err != nil || len(res.Observations) != 1 {
				t.Fatalf("commit: %v", err)
			}
			if _, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s2", Project: "p", Type: "change",
				Title: "another record", CreatedAt: 2, FilesRead: []string{"internal/shared.go"}}}}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				t.Fatal(err)
			}
			if err := forget(t, r, res.Observations[0].ID); err != nil {
				t.Fatal(err)
			}
			// Its path went with it (only it named that path); the path another record
			// names stays.
			var paths []string
			rows, err := r.r.QueryContext(ctx, "SELECT path FROM file_paths ORDER BY path")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var p string
				rows.Scan(&p)
				paths = append(paths, p)
			}
			rows.Close()
			if !slices.Equal(paths, []string{"internal/shared.go"}) {
				t.Errorf("file paths after the forget: %q, want only the one another record names", paths)
			}
			for _, p := range []string{path, path + "-wal"} {
				b, _ := os.ReadFile(p)
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("%s still holds the forgotten text", filepath.Base(p))
				}
				if bytes.Contains(b, []byte(word[1:])) {
					t.Errorf("%s still holds the forgotten word in the full-text index", filepath.Base(p))
				}
			}
		})
	}
}

// A reader holding an old snapshot (the node's background integrity check) keeps a forget's
// TRUNCATE checkpoint from emptying the WAL: the forget still returns, and the forgotten text
// leaves the WAL once the reader is done, by the background retry — not at some later forget.
func TestForgottenTextLeavesTheWALAfterAReaderFinishes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		t.Fatal(err)
	}
	// The reader's snapshot starts before the record is written: it pins the WAL.
	reader, err := r.r.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	if _, err := reader.ExecContext(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := reader.QueryRowContext(ctx, "SELECT COUNT(*) FROM observations").Scan(&n); err != nil {
		t.Fatal(err)
	}
	secret := "wombat-held-by-a-reader"
	res, err := r.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s1", Project: "p", Type: "change",
		Title: "t", Narrative: strings.Repeat(secret+" ", 1000), CreatedAt: 1}}})
	if err != nil || len(res.Observations) != 1 {
		t.Fatalf("commit: %v", err)
	}
	if _, err := r.Forget(ctx, []string{res.Observations[0].ID}); err != nil {
		t.Fatal(err)
	}
	if !walHolds(path, secret) {
		t.Fatal("the WAL lost the text while a reader held it: the test no longer sets up what it checks")
	}
	if _, err := reader.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	waitWALWithout(t, path, secret)
	if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(secret)) {
		t.Fatal("the database file still holds the forgotten text")
	}
}

// walHolds reports whether the WAL beside the database at path holds text.
func walHolds(path, text string) bool {
	b, _ := os.ReadFile(path + "-wal")
	return bytes.Contains(b, []byte(text))
}

// waitWALWithout polls, with a deadline, until the WAL beside the database at path no
// longer holds text: a forget's background checkpoint retry runs every purgeRetryEvery.
func waitWALWithout(t *testing.T, path, text string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); walHolds(path, text); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the forgotten text is still in the WAL 30 s after the reader finished")
		}
	}
}

// A data dir whose name holds '#', '?' or '%' (Go names a fuzz seed's temp dir "…seed#0…")
// keeps its database inside it: SQLite's URI would otherwise end the path at the '#' or
// '?' and open a file beside the dir, one that every such dir shares.
func TestOpenPathWithURICharacters(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "a#b?c%41d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	r, err := Open(context.Background(), Config{Path: filepath.Join(dir, "memnode.db"), Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"memnode.db", "memnode.queue.db"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s is not in the data dir: %v", f, err)
		}
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files beside the data dir: %v", names)
	}
}

package replica

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// TestDeferredIndexingKeepsTheIndexTrue: batches that index their records at their end
// (Import here, with tombstones that remove some of the batch's own records in the same
// transaction, and Commit) leave every full-text index equal to its content (FTS5's
// integrity-check), every live record found by its own word and no removed one, and no
// row in fts_deferred once committed. Without indexDeferred the records are missing; without
// the triggers' guard a record removed in its own batch is deleted from an index it was never
// in, and the check fails.
func TestDeferredIndexingKeepsTheIndexTrue(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		r := openTest(t, "dev-a")
		now := time.Now().UnixMilli()
		live := map[string]string{} // record ID → its word
		n := 0
		for range rapid.IntRange(1, 4).Draw(rt, "batches") {
			b := &store.ImportBatch{Sessions: []memory.Session{{ID: fmt.Sprintf("s%d", n), Project: "p", StartedAt: now}}}
			sid := b.Sessions[0].ID
			for range rapid.IntRange(0, 6).Draw(rt, "records") {
				n++
				word := fmt.Sprintf("w%dword", n)
				id := store.ImportID(now+int64(n), word)
				switch rapid.IntRange(0, 2).Draw(rt, "kind") {
				case 0:
					b.Observations = append(b.Observations, memory.Observation{ID: id, SessionID: sid, Project: "p", Type: "change", Title: word, Narrative: "about " + word, CreatedAt: now})
				case 1:
					b.Prompts = append(b.Prompts, memory.Prompt{ID: id, SessionID: sid, Project: "p", Text: "ask " + word, CreatedAt: now})
				default:
					b.Summaries = append(b.Summaries, memory.Summary{ID: id, SessionID: sid, Project: "p", Request: word, CreatedAt: now})
				}
				live[id] = word
			}
			// Tombstones for records of this batch (stored, then removed, in one
			// transaction) and of earlier ones (indexed, then removed).
			for id := range live {
				if rapid.IntRange(0, 3).Draw(rt, "forget") == 0 {
					b.Tombstones = append(b.Tombstones, id)
				}
			}
			slices.Sort(b.Tombstones) // map order: the draws must not depend on it
			if _, err := r.Import(ctx, b); err != nil {
				rt.Fatal(err)
			}
			for _, id := range b.Tombstones {
				delete(live, id)
			}
			// A commit of one record indexes it in its trigger, of more at the end.
			var c store.Batch
			for range rapid.IntRange(0, 3).Draw(rt, "committed") {
				n++
				word := fmt.Sprintf("w%dword", n)
				c.Observations = append(c.Observations, memory.Observation{SessionID: sid, Project: "p", Type: "change", Title: word, CreatedAt: now})
			}
			if len(c.Observations) > 0 {
				res, err := r.Commit(ctx, &c)
				if err != nil {
					rt.Fatal(err)
				}
				if len(res.Observations) != len(c.Observations) {
					rt.Fatalf("committed %d of %d observations", len(res.Observations), len(c.Observations))
				}
				for _, o := range res.Observations {
					live[o.ID] = o.Title
				}
			}
			checkIndexes(rt, r, live, n)
		}
	})
}

// checkIndexes asserts what TestDeferredIndexingKeepsTheIndexTrue promises after a commit.
func checkIndexes(rt *rapid.T, r *Replica, live map[string]string, n int) {
	ctx := context.Background()
	var pending int
	if err := r.w.QueryRowContext(ctx, "SELECT count(*) FROM fts_deferred").Scan(&pending); err != nil {
		rt.Fatal(err)
	}
	if pending != 0 {
		rt.Fatalf("fts_deferred holds %d rows after a commit", pending)
	}
	for _, f := range ftsTables {
		if _, err := r.w.ExecContext(ctx, "INSERT INTO "+f.index+"("+f.index+", rank) VALUES ('integrity-check', 1)"); err != nil {
			rt.Fatalf("%s: %v", f.index, err)
		}
	}
	words := map[string]bool{}
	for _, w := range live {
		words[w] = true
	}
	for i := 1; i <= n; i++ {
		w := fmt.Sprintf("w%dword", i)
		var hits int
		for _, f := range ftsTables {
			var c int
			if err := r.w.QueryRowContext(ctx, "SELECT count(*) FROM "+f.index+" WHERE "+f.index+" MATCH ?", `"`+w+`"`).Scan(&c); err != nil {
				rt.Fatal(err)
			}
			hits += c
		}
		if want := map[bool]int{true: 1, false: 0}[words[w]]; hits != want {
			rt.Fatalf("%s: %d index hits, want %d", w, hits, want)
		}
	}
}

// TestWriterKeepsStatementJournalsInMemory: the writer connection's statement journals
// (temp_store = MEMORY, 2) stay off the disk; the readers keep SQLite's default.
func TestWriterKeepsStatementJournalsInMemory(t *testing.T) {
	r := openTest(t, "dev-a")
	var w, rd int
	if err := r.w.QueryRow("PRAGMA temp_store").Scan(&w); err != nil {
		t.Fatal(err)
	}
	if err := r.r.QueryRow("PRAGMA temp_store").Scan(&rd); err != nil {
		t.Fatal(err)
	}
	if w != 2 || rd != 0 {
		t.Fatalf("temp_store: writer %d, reader %d; want 2 and 0", w, rd)
	}
}

// TestIndexesMergeEightSegmentsAtOnce: every full-text index of a new or migrated replica
// merges eight segments at a time (migration 21), the setting FTS5 reads from its config
// table; without the migration FTS5's default of four applies and the table has no row.
func TestIndexesMergeEightSegmentsAtOnce(t *testing.T) {
	r := openTest(t, "dev-a")
	for _, tbl := range []string{"observations", "prompts", "summaries"} {
		var v int
		if err := r.r.QueryRow("SELECT v FROM " + tbl + "_fts_config WHERE k = 'automerge'").Scan(&v); err != nil {
			t.Fatalf("%s_fts automerge: %v", tbl, err)
		}
		if v != 8 {
			t.Fatalf("%s_fts automerge = %d, want 8", tbl, v)
		}
	}
}

// TestABatchIsIndexedAsOneSegment: a batch whose terms are more than FTS5's default 1 MiB
// of pending data is written as one segment of the full-text index (migration 22's
// hashsize), not one a MiB that merges then rewrite. Each segment has rows in the index's
// %_idx table, so their count is the segment count; without the migration this batch
// leaves 11.
func TestABatchIsIndexedAsOneSegment(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 6,000 records")
	}
	ctx := context.Background()
	r := openTest(t, "dev-a")
	now := time.Now().UnixMilli()
	b := &store.ImportBatch{Sessions: []memory.Session{{ID: "s", Project: "p", StartedAt: now}}}
	var narrative []byte
	for i := range 6000 {
		narrative = narrative[:0]
		for j := range 60 {
			narrative = fmt.Appendf(narrative, "t%dx%d ", (i*61+j*7919)%50000, j)
		}
		id := store.ImportID(now+int64(i), "x")
		b.Observations = append(b.Observations, memory.Observation{ID: id, SessionID: "s", Project: "p", Type: "change",
			Title: fmt.Sprintf("record %d", i), Narrative: string(narrative), CreatedAt: now + int64(i)})
	}
	if _, err := r.Import(ctx, b); err != nil {
		t.Fatal(err)
	}
	var segments int
	if err := r.r.QueryRow("SELECT count(DISTINCT segid) FROM observations_fts_idx").Scan(&segments); err != nil {
		t.Fatal(err)
	}
	if segments != 1 {
		t.Fatalf("the batch was written as %d segments, want 1", segments)
	}
	for _, tbl := range []string{"observations", "prompts", "summaries"} {
		var v int
		if err := r.r.QueryRow("SELECT v FROM " + tbl + "_fts_config WHERE k = 'hashsize'").Scan(&v); err != nil || v != 64<<20 {
			t.Fatalf("%s_fts hashsize = %d (%v), want 64 MiB", tbl, v, err)
		}
	}
}

package replica_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

// checkCounts fails the case when r's maintained counts differ from a fresh count.
func (w *world) checkCounts(r *replica.Replica, name string) {
	diff, err := replica.CountsDiff(w.ctx, r)
	if err != nil {
		w.t.Fatalf("%s: %v", name, err)
	}
	if diff != "" {
		w.t.Fatalf("%s: maintained counts differ from a fresh count:\n%s", name, diff)
	}
}

// exportBatch is what 'memnode export' carries of r, as one import batch.
func (w *world) exportBatch(r *replica.Replica) *store.ImportBatch {
	b := &store.ImportBatch{}
	err := r.Walk(w.ctx, "", store.Visitor{
		Device:      func(d memory.Device) error { b.Devices = append(b.Devices, d); return nil },
		Session:     func(s memory.Session) error { b.Sessions = append(b.Sessions, s); return nil },
		Prompt:      func(p memory.Prompt) error { b.Prompts = append(b.Prompts, p); return nil },
		Observation: func(o memory.Observation) error { b.Observations = append(b.Observations, o); return nil },
		Summary:     func(s memory.Summary) error { b.Summaries = append(b.Summaries, s); return nil },
		Tombstone:   func(id string) error { b.Tombstones = append(b.Tombstones, id); return nil },
		Supersede:   func(s store.Supersession) error { b.Supersedes = append(b.Supersedes, s); return nil },
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// TestCountsFollowEveryWrite: whatever the history — commits in two projects, sessions
// moving between them, forgets of records and sessions, supersedes and corrections, pins,
// applied peer ops in any order, op-log compaction — and whatever then reaches a replica —
// an import (twice, the second a no-op), a snapshot install cut midway and resumed, every op
// under the chaos schedule, a removal cut, a salvage — the counts it maintains (status, the
// session-start context's header) equal a fresh COUNT(*) and SUM() of its tables, on real
// SQLite files.
func TestCountsFollowEveryWrite(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(rt, t, rapid.IntRange(2, 3).Draw(rt, "origins"))
		defer w.close()
		newCompactionWorld(w)
		w.run()
		for k, r := range w.origins {
			w.checkCounts(r, fmt.Sprintf("origin %d", k))
		}
		src := w.origins[rapid.IntRange(0, len(w.origins)-1).Draw(rt, "source")]

		imp := w.fresh("importer")
		for round := range 2 {
			if _, err := imp.Import(w.ctx, w.exportBatch(src)); err != nil {
				rt.Fatalf("import %d: %v", round, err)
			}
			w.checkCounts(imp, fmt.Sprintf("import %d", round))
		}

		s := w.fresh("snap-device")
		chunkBytes := rapid.IntRange(1, 4096).Draw(rt, "chunk bytes")
		chunks := takeSnapshot(t, src, chunkBytes)
		if len(chunks) > 1 {
			// Cut midway: the chunks committed so far count, and the rest resumes from the cursor.
			if _, err := s.InstallSnapshot(w.ctx, feedChunks(chunks, rapid.IntRange(1, len(chunks)-1).Draw(rt, "cut after"))); err == nil {
				rt.Fatal("an install cut before its end succeeded")
			}
			w.checkCounts(s, "snapshot install cut midway")
			prog, err := s.SnapshotProgress(w.ctx)
			if err != nil {
				rt.Fatal(err)
			}
			chunks = nil
			if err := src.Snapshot(w.ctx, prog.From, chunkBytes, func(c store.SnapshotChunk) error {
				chunks = append(chunks, c)
				return nil
			}); err != nil {
				rt.Fatal(err)
			}
		}
		if _, err := s.InstallSnapshot(w.ctx, feedChunks(chunks, -1)); err != nil {
			rt.Fatalf("install: %v", err)
		}
		w.checkCounts(s, "snapshot install")

		all := w.allOps()
		obs := w.fresh("observer")
		w.deliverChaos(obs, all, "observer")
		w.checkCounts(obs, "observer")
		for k, r := range w.origins {
			w.deliverChaos(r, all, fmt.Sprintf("origin %d", k))
			w.checkCounts(r, fmt.Sprintf("origin %d after every op", k))
		}

		cut := w.origins[0]
		gone := w.origins[len(w.origins)-1]
		vv, err := cut.VersionVector(w.ctx)
		if err != nil {
			rt.Fatal(err)
		}
		at := uint64(rapid.IntRange(0, int(vv[gone.Origin()])).Draw(rt, "cut at"))
		if _, err := cut.CutOrigin(w.ctx, gone.Origin(), at); err != nil {
			rt.Fatalf("cut: %v", err)
		}
		w.checkCounts(cut, "after a removal cut")

		// Salvage reads a file as it lies on disk (immutable, its WAL unread): close it first.
		if err := src.Close(); err != nil {
			rt.Fatal(err)
		}
		salvPath := filepath.Join(w.dir, "salvaged.db")
		replica.PlaceMigrated(rt, salvPath)
		salv, err := replica.Open(w.ctx, replica.Config{Path: salvPath, Origin: "salvager"})
		if err != nil {
			rt.Fatal(err)
		}
		defer salv.Close()
		if _, err := salv.Salvage(context.Background(), replica.PathOf(src)); err != nil {
			rt.Fatalf("salvage: %v", err)
		}
		w.checkCounts(salv, "salvage")
	})
}

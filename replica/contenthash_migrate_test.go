package replica

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// TestContentHashMigrationStoresBytes: a database of schema v16 (content hashes as 32 hex
// characters) is migrated to hashes stored as 16 bytes: HashContent's form is packed, any
// other value (an import's) stays the text it was; every op payload (observations' rebuilt
// from their row), the dump, the reads and the snapshot's rows are what they were; a
// repeated observation of the session is still a duplicate; the search index is intact; and
// a device installing the snapshot stores the hash as bytes and serves the same ops.
func TestContentHashMigrationStoresBytes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixMilli()
	obs := []memory.Observation{
		{SessionID: "s1", Project: "p", Type: "change", Title: "leeway for clock skew", CreatedAt: now},
		{SessionID: "s1", Project: "p", Type: "bugfix", Title: "token refresh race", CreatedAt: now + 1}}
	if _, err := r.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: now}}, Observations: obs}); err != nil {
		t.Fatal(err)
	}
	odd := memory.Observation{ID: store.ImportID(now, "odd"), SessionID: "s1", Project: "p", Type: "change", Title: "imported",
		ContentHash: "ABCDEF0123456789ABCDEF0123456789", CreatedAt: now + 2}
	if _, err := r.Import(ctx, &store.ImportBatch{Observations: []memory.Observation{odd}}); err != nil {
		t.Fatal(err)
	}
	type state struct {
		ops      []store.Op
		dump     string
		hashes   []string
		snapshot []string
	}
	read := func(r *Replica) state {
		t.Helper()
		var s state
		s.ops = opsOf(t, r, "dev-a")
		if s.dump, err = r.CanonicalDump(ctx); err != nil {
			t.Fatal(err)
		}
		got, err := r.SessionObservations(ctx, "s1", 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range got {
			s.hashes = append(s.hashes, o.ContentHash)
		}
		err = r.Snapshot(ctx, store.SnapshotCursor{}, 1<<20, func(c store.SnapshotChunk) error {
			if c.Table == "observations" {
				i := slices.Index(c.Columns, "content_hash")
				for _, row := range c.Rows {
					h, ok := row[i].(string)
					if !ok {
						t.Fatalf("snapshot content_hash %T %v, want the text", row[i], row[i])
					}
					s.snapshot = append(s.snapshot, h)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stored := func(r *Replica) (blobs, texts int) {
		t.Helper()
		if err := r.ReadDB().QueryRow(`SELECT COUNT(*) FILTER (WHERE typeof(content_hash) = 'blob' AND length(content_hash) = 16),
			COUNT(*) FILTER (WHERE typeof(content_hash) = 'text') FROM observations`).Scan(&blobs, &texts); err != nil {
			t.Fatal(err)
		}
		return blobs, texts
	}
	want := read(r)
	if len(want.hashes) != 3 || !slices.Contains(want.hashes, odd.ContentHash) || !slices.Contains(want.hashes, obs[0].HashContent()) || inRowCount(t, r) != 3 {
		t.Fatalf("before: hashes %q, %d ops in row", want.hashes, inRowCount(t, r))
	}
	if b, x := stored(r); b != 2 || x != 1 {
		t.Fatalf("v17 stores %d hashes as bytes, %d as text; want 2, 1", b, x)
	}
	// Back to v16: every hash as text.
	for _, q := range []string{"UPDATE observations SET content_hash = " + hashTextSQL, "DELETE FROM schema_version WHERE version >= 17"} {
		if _, err := r.w.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if b, x := stored(r); b != 0 || x != 3 {
		t.Fatalf("v16: %d hashes as bytes, %d as text", b, x)
	}
	r.Close()
	if r, err = Open(ctx, Config{Path: path, Origin: "dev-a"}); err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, x := stored(r); b != 2 || x != 1 {
		t.Fatalf("after the migration: %d hashes as bytes, %d as text; want 2, 1", b, x)
	}
	got := read(r)
	if !slices.EqualFunc(got.ops, want.ops, opEqual) || got.dump != want.dump || !slices.Equal(got.hashes, want.hashes) || !slices.Equal(got.snapshot, want.snapshot) {
		t.Fatalf("after the migration:\nops %+v\nwant %+v\ndump equal %v, hashes %q (want %q), snapshot %q (want %q)",
			got.ops, want.ops, got.dump == want.dump, got.hashes, want.hashes, got.snapshot, want.snapshot)
	}
	if _, err := r.w.ExecContext(ctx, `INSERT INTO observations_fts(observations_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Fatalf("search index after the migration: %v", err)
	}
	res, err := r.Commit(ctx, &store.Batch{Observations: obs[:1]})
	if err != nil || res.Duplicates != 1 || len(res.Observations) != 0 {
		t.Fatalf("the session's observation again: %+v, %v; want a duplicate", res, err)
	}
	// A device that installs the snapshot stores the bytes and serves the same ops.
	var chunks []store.SnapshotChunk
	if err := r.Snapshot(ctx, store.SnapshotCursor{}, 1<<20, func(c store.SnapshotChunk) error { chunks = append(chunks, c); return nil }); err != nil {
		t.Fatal(err)
	}
	b, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "b.db"), Origin: "dev-b"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	i := 0
	if _, err := b.InstallSnapshot(ctx, func() (store.SnapshotChunk, error) {
		if i == len(chunks) {
			return store.SnapshotChunk{}, io.EOF
		}
		i++
		return chunks[i-1], nil
	}); err != nil {
		t.Fatal(err)
	}
	if bl, x := stored(b); bl != 2 || x != 1 {
		t.Fatalf("the installed copy stores %d hashes as bytes, %d as text; want 2, 1", bl, x)
	}
	if onB := read(b); !slices.EqualFunc(onB.ops, want.ops, opEqual) || !slices.Equal(onB.hashes, want.hashes) {
		t.Fatalf("the installed copy: ops %+v, hashes %q", onB.ops, onB.hashes)
	}
}

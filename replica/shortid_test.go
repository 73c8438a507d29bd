package replica

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/memory"
)

func importObservations(t *testing.T, r *Replica, n int) []string {
	t.Helper()
	b := &store.ImportBatch{}
	for i := range n {
		at := int64(1_790_000_000_000 + i*1000)
		b.Observations = append(b.Observations, memory.Observation{ID: store.ImportID(at, fmt.Sprint("short:", i)),
			SessionID: "s1", Project: "p", Type: "change", Title: fmt.Sprint("obs ", i), CreatedAt: at})
	}
	if _, err := r.Import(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i, o := range b.Observations {
		ids[i] = o.ID
	}
	return ids
}

// TestShortIDsAreUniquePrefixesThatResolve: every record's short form is at least
// MinShortID characters, never reads as a claude-mem number, differs from every other
// record's, and resolves back to its record; a prefix several share is an error naming
// them; a forgotten record's short ID resolves no more.
func TestShortIDsAreUniquePrefixesThatResolve(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	ids := importObservations(t, r, 3000)
	short, err := r.ShortIDs(ctx, append(ids, "0000000000000000000000NONE"))
	if err != nil {
		t.Fatal(err)
	}
	if len(short) != len(ids) {
		t.Fatalf("%d short forms for %d records (an unknown ID must get none)", len(short), len(ids))
	}
	seen := map[string]string{}
	for _, id := range ids {
		s := short[id]
		if len(s) < store.MinShortID || len(s) > 8 || looksNumeric(s) {
			t.Errorf("short form %q of %s", s, id)
		}
		if memory.EstimateTokens(s) > 3 {
			t.Errorf("short form %q costs %d tokens", s, memory.EstimateTokens(s))
		}
		for o, os := range seen {
			if strings.HasPrefix(os, s) || strings.HasPrefix(s, os) {
				t.Fatalf("short forms %q (%s) and %q (%s): one is a prefix of the other", s, id, os, o)
			}
		}
		seen[id] = s
		for _, form := range []string{s, strings.ToLower(s)} {
			got, ok, err := r.ResolveShortID(ctx, form)
			if err != nil || !ok || got != id {
				t.Fatalf("resolve %q: %q %v %v, want %s", form, got, ok, err, id)
			}
		}
	}
	// 3,000 hashes over 32⁴ four-character prefixes: some share one.
	by4 := map[string][]string{}
	for _, id := range ids {
		by4[shortHash(id)[:4]] = append(by4[shortHash(id)[:4]], id)
	}
	var shared string
	for p, group := range by4 {
		if len(group) > 1 {
			shared = p
			break
		}
	}
	if shared == "" {
		t.Fatal("no shared 4-character prefix among 3,000 hashes")
	}
	_, ok, err := r.ResolveShortID(ctx, shared)
	if ok || !errors.Is(err, store.ErrAmbiguous) {
		t.Fatalf("shared prefix %s: ok=%v err=%v, want ErrAmbiguous", shared, ok, err)
	}
	for _, id := range by4[shared] {
		if !strings.Contains(err.Error(), id) {
			t.Errorf("the ambiguity error does not name candidate %s: %v", id, err)
		}
	}
	for _, bad := range []string{"abc", "ABCDEFGHJKMNP", "AB-CD", "ILOU"} {
		if _, ok, err := r.ResolveShortID(ctx, bad); ok || err != nil {
			t.Errorf("resolve %q: ok=%v err=%v, want no match", bad, ok, err)
		}
	}
	if _, err := r.Forget(ctx, []string{ids[0]}); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := r.ResolveShortID(ctx, short[ids[0]]); ok || err != nil {
		t.Errorf("forgotten record's short ID resolves: %q %v %v", got, ok, err)
	}
}

// TestShortIDMigrationBackfills: records stored before schema v6 get short IDs when the
// migration runs.
func TestShortIDMigrationBackfills(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	ids := importObservations(t, r, 20)
	// Back to schema v5: as a database written before short IDs (and before the later
	// migrations, which run again after it).
	for _, q := range []string{"DROP TRIGGER observations_short_ad", "DROP TRIGGER prompts_short_ad", "DROP TRIGGER summaries_short_ad",
		"DROP TABLE short_ids", "ALTER TABLE ops DROP COLUMN inrow", "DELETE FROM schema_version WHERE version >= 6"} {
		if _, err := r.w.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	r, err = Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	short, err := r.ShortIDs(ctx, ids)
	if err != nil || len(short) != len(ids) {
		t.Fatalf("after the migration: %d short IDs for %d records, err %v", len(short), len(ids), err)
	}
	if got, ok, _ := r.ResolveShortID(ctx, short[ids[7]]); !ok || got != ids[7] {
		t.Errorf("resolve %s: %q %v", short[ids[7]], got, ok)
	}
}

// BenchmarkShortIDs is what the session-start context asks for: the short IDs of the 50
// observations it shows, in a replica of 2,000.
func BenchmarkShortIDs(b *testing.B) {
	ctx := context.Background()
	r, err := Open(ctx, Config{Path: filepath.Join(b.TempDir(), "memnode.db"), Origin: "origin-bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var batch store.Batch
	batch.Sessions = []memory.Session{{ID: "s", Project: "p", StartedAt: 1}}
	for i := range 2000 {
		batch.Observations = append(batch.Observations, memory.Observation{SessionID: "s", Project: "p", Type: "discovery",
			Title: fmt.Sprintf("finding %d", i), CreatedAt: int64(i + 1)})
	}
	res, err := r.Commit(ctx, &batch)
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = res.Observations[i*40].ID
	}
	b.ResetTimer()
	for range b.N {
		got, err := r.ShortIDs(ctx, ids)
		if err != nil || len(got) != len(ids) {
			b.Fatalf("%d short IDs, %v", len(got), err)
		}
	}
}

// shortIDsFromTable is the short-ID rule computed from the short_ids table in SQL (the
// reads ShortIDs made before the index was kept in memory): the oracle the in-memory
// index must agree with.
func shortIDsFromTable(t *testing.T, r *Replica, ids []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, id := range ids {
		h := shortHash(id)
		var owner, before, after sql.NullString
		err := r.r.QueryRow(`SELECT (SELECT id FROM short_ids WHERE h = ?1),
			(SELECT h FROM short_ids WHERE h < ?1 ORDER BY h DESC LIMIT 1),
			(SELECT h FROM short_ids WHERE h > ?1 ORDER BY h LIMIT 1)`, h).Scan(&owner, &before, &after)
		if err != nil {
			t.Fatal(err)
		}
		if owner.String != id {
			continue
		}
		n := store.MinShortID
		for _, nb := range []sql.NullString{before, after} {
			if nb.Valid {
				c := 0
				for c < len(h) && h[c] == nb.String[c] {
					c++
				}
				n = max(n, c+1)
			}
		}
		for n < len(h) && looksNumeric(h[:n]) {
			n++
		}
		out[id] = h[:n]
	}
	return out
}

// TestShortIndexFollowsEveryWrite: the in-memory short-ID index answers what the
// short_ids table says after every kind of write — local commits before and after it is
// first read, an import, ops applied from another device, forgetting a record and a
// session, cutting an origin — and after reopening.
func TestShortIndexFollowsEveryWrite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { r.Close() }()
	var asked []string // every ID ever stored, and one never stored
	asked = append(asked, "0000000000000000000000NONE")
	check := func(step string) {
		t.Helper()
		got, err := r.ShortIDs(ctx, asked)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		want := shortIDsFromTable(t, r, asked)
		if len(want) == 0 {
			t.Fatalf("%s: no records", step)
		}
		if !maps.Equal(got, want) {
			for id, w := range want {
				if got[id] != w {
					t.Errorf("%s: %s: short ID %q, the table says %q", step, id, got[id], w)
				}
			}
			for id, g := range got {
				if _, ok := want[id]; !ok {
					t.Errorf("%s: %s: short ID %q for a record the table does not hold", step, id, g)
				}
			}
			t.FailNow()
		}
	}
	commit := func(session string, n int) {
		t.Helper()
		b := &store.Batch{Sessions: []memory.Session{{ID: session, Project: "p", StartedAt: 1}},
			Prompts:   []memory.Prompt{{SessionID: session, Project: "p", PromptNumber: 1, Text: "do " + session, CreatedAt: 1}},
			Summaries: []memory.Summary{{SessionID: session, Project: "p", Request: "did " + session, CreatedAt: 2}}}
		for i := range n {
			b.Observations = append(b.Observations, memory.Observation{SessionID: session, Project: "p", Type: "change",
				Title: fmt.Sprint(session, " obs ", i), CreatedAt: int64(3 + i)})
		}
		res, err := r.Commit(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Observations {
			asked = append(asked, o.ID)
		}
		for _, p := range res.Prompts {
			asked = append(asked, p.ID)
		}
		for _, s := range res.Summaries {
			asked = append(asked, s.ID)
		}
	}
	commit("s1", 1500) // before the index is first read
	check("first read")
	// Added to the loaded index, while another goroutine reads it.
	stop, read := make(chan struct{}), make(chan error, 1)
	go func() {
		ids := slices.Clone(asked)
		for {
			select {
			case <-stop:
				read <- nil
				return
			default:
			}
			if _, err := r.ShortIDs(ctx, ids); err != nil {
				read <- err
				return
			}
		}
	}()
	commit("s2", 1500)
	close(stop)
	if err := <-read; err != nil {
		t.Fatal(err)
	}
	check("commit")
	asked = append(asked, importObservations(t, r, 300)...)
	check("import")

	other := openTest(t, "dev-b")
	if _, err := other.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s3", Project: "p", StartedAt: 1}},
		Observations: []memory.Observation{{SessionID: "s3", Project: "p", Type: "change", Title: "from b", CreatedAt: 5}}}); err != nil {
		t.Fatal(err)
	}
	ops, err := other.OpsSince(ctx, "dev-b", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ApplyOps(ctx, ops); err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		asked = append(asked, op.RecordID)
	}
	check("remote ops")

	// A forget names what it deletes: the index drops those keys and is not read again
	// (a reread is O(records): 1 s at a million).
	kept := func(step string) {
		t.Helper()
		r.shorts.mu.RLock()
		defer r.shorts.mu.RUnlock()
		if !r.shorts.loaded {
			t.Fatalf("%s: the short-ID index was dropped, to be read again", step)
		}
	}
	if _, err := r.Forget(ctx, []string{asked[1]}); err != nil {
		t.Fatal(err)
	}
	kept("forget a record")
	check("forget a record")
	if _, err := r.Forget(ctx, []string{"s2", "never-stored"}); err != nil {
		t.Fatal(err)
	}
	kept("forget a session")
	check("forget a session")
	commit("s4", 10) // after a forget dropped the index
	check("commit after a forget")
	if _, err := r.CutOrigin(ctx, "dev-b", 0); err != nil {
		t.Fatal(err)
	}
	check("cut an origin")

	r.Close()
	if r, err = Open(ctx, Config{Path: path, Origin: "dev-a"}); err != nil {
		t.Fatal(err)
	}
	check("reopen")
}

// TestShortIndexFollowsASnapshotInstall: a blank device whose short-ID index is already
// loaded (empty) installs a snapshot; the records it installed then have exactly the short
// IDs the table gives them — the install's rows reach the in-memory index like a commit's.
func TestShortIndexFollowsASnapshotInstall(t *testing.T) {
	ctx := context.Background()
	src := openTest(t, "dev-src")
	b := &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: 1}}}
	for i := range 400 {
		b.Observations = append(b.Observations, memory.Observation{SessionID: "s1", Project: "p", Type: "change",
			Title: fmt.Sprint("obs ", i), CreatedAt: int64(2 + i)})
	}
	res, err := src.Commit(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range res.Observations {
		ids = append(ids, o.ID)
	}
	dst := openTest(t, "dev-dst")
	if got, err := dst.ShortIDs(ctx, ids); err != nil || len(got) != 0 {
		t.Fatalf("blank device's short IDs: %v, %v", got, err)
	}
	var chunks []store.SnapshotChunk
	if err := src.Snapshot(ctx, store.SnapshotCursor{}, 64<<10, func(c store.SnapshotChunk) error { chunks = append(chunks, c); return nil }); err != nil {
		t.Fatal(err)
	}
	k := 0
	if _, err := dst.InstallSnapshot(ctx, func() (store.SnapshotChunk, error) { k++; return chunks[k-1], nil }); err != nil {
		t.Fatal(err)
	}
	got, err := dst.ShortIDs(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	want := shortIDsFromTable(t, dst, ids)
	if len(want) != len(ids) || !maps.Equal(got, want) {
		t.Fatalf("after the install: %d short IDs from the index, %d in the table, of %d records", len(got), len(want), len(ids))
	}
}

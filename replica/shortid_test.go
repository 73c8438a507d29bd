package replica

import (
	"context"
	"errors"
	"fmt"
	"github.com/memnode/memnode/store"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

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

// TestShortIDMigrationsKeepShortIDs: records stored before schema v6 (no short IDs) and
// records stored at v14 (a short_ids table, dropped by migration 15) have short IDs that
// resolve after the migrations, the table and its triggers are gone, and a forget — whose
// deletes fired those triggers — still works.
func TestShortIDMigrationsKeepShortIDs(t *testing.T) {
	for _, from := range []struct {
		name string
		back []string
	}{
		// As a database written before short IDs (the later migrations run again after 6).
		{"v5", append(slices.Clone(opsAtV15), "ALTER TABLE ops DROP COLUMN inrow", "DELETE FROM schema_version WHERE version >= 6")},
		// As a database at v14: migration 6's table and triggers, filled.
		{"v14", []string{
			"CREATE TABLE IF NOT EXISTS short_ids (h TEXT PRIMARY KEY, id TEXT NOT NULL) WITHOUT ROWID",
			"CREATE INDEX IF NOT EXISTS short_ids_id ON short_ids(id)",
			"CREATE TRIGGER IF NOT EXISTS observations_short_ad AFTER DELETE ON observations BEGIN DELETE FROM short_ids WHERE id = old.id; END",
			"CREATE TRIGGER IF NOT EXISTS prompts_short_ad AFTER DELETE ON prompts BEGIN DELETE FROM short_ids WHERE id = old.id; END",
			"CREATE TRIGGER IF NOT EXISTS summaries_short_ad AFTER DELETE ON summaries BEGIN DELETE FROM short_ids WHERE id = old.id; END",
			"INSERT OR IGNORE INTO short_ids(h, id) SELECT memnode_test_short_hash(id), id FROM observations",
			"DELETE FROM schema_version WHERE version >= 15"}},
	} {
		t.Run(from.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "memnode.db")
			r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
			if err != nil {
				t.Fatal(err)
			}
			ids := importObservations(t, r, 20)
			conn, err := r.w.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := conn.Raw(func(dc any) error {
				return dc.(interface {
					RegisterFunc(string, any, bool) error
				}).RegisterFunc("memnode_test_short_hash", shortHash, true)
			}); err != nil {
				t.Fatal(err)
			}
			for _, q := range from.back {
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			conn.Close()
			r.Close()
			r, err = Open(ctx, Config{Path: path, Origin: "dev-a"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var left int
			if err := r.r.QueryRow("SELECT COUNT(*) FROM sqlite_schema WHERE name LIKE 'short_ids%' OR name LIKE '%_short_ad'").Scan(&left); err != nil || left != 0 {
				t.Fatalf("after the migrations: %d short_ids tables, indexes or triggers left (%v)", left, err)
			}
			short, err := r.ShortIDs(ctx, ids)
			if err != nil || len(short) != len(ids) {
				t.Fatalf("after the migrations: %d short IDs for %d records, err %v", len(short), len(ids), err)
			}
			if got, ok, _ := r.ResolveShortID(ctx, short[ids[7]]); !ok || got != ids[7] {
				t.Errorf("resolve %s: %q %v", short[ids[7]], got, ok)
			}
			if _, err := r.Forget(ctx, []string{ids[7]}); err != nil {
				t.Fatalf("forget after the migrations: %v", err)
			}
			if got, ok, err := r.ResolveShortID(ctx, short[ids[7]]); ok || err != nil {
				t.Errorf("forgotten record's short ID resolves: %q %v %v", got, ok, err)
			}
		})
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

// shortIDsFromTable is the short-ID rule computed the slow way, from every record ID the
// tables hold, spelled and sorted as strings: the oracle the in-memory index must agree with.
func shortIDsFromTable(t *testing.T, r *Replica, ids []string) map[string]string {
	t.Helper()
	rows, err := r.r.Query("SELECT id FROM prompts UNION ALL SELECT id FROM observations UNION ALL SELECT id FROM summaries")
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string][]string{} // hash → the IDs that spell it
	var hashes []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		h := shortHash(id)
		if len(owners[h]) == 0 {
			hashes = append(hashes, h)
		}
		owners[h] = append(owners[h], id)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(hashes)
	out := map[string]string{}
	for _, id := range ids {
		h := shortHash(id)
		if len(owners[h]) != 1 || owners[h][0] != id {
			continue
		}
		i, _ := slices.BinarySearch(hashes, h)
		n := store.MinShortID
		for _, j := range []int{i - 1, i + 1} {
			if j >= 0 && j < len(hashes) {
				c := 0
				for c < len(h) && h[c] == hashes[j][c] {
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
// record tables say after every kind of write — local commits before and after it is
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
	r.shorts.mu.RLock()
	loaded := r.shorts.loaded
	r.shorts.mu.RUnlock()
	if !loaded {
		t.Fatal("the index was dropped by an import that only added records: it is read again, O(records)")
	}
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

// TestShortIndexHashSharedByTwoRecords: two records whose IDs agree in the hash's 60 bits
// (once in 2⁶⁰ pairs) both stay in the index and resolve as ambiguous, neither gets a short
// form (it would name both), and a delete of that hash, which cannot say which of the two
// went, drops the index to be read again.
func TestShortIndexHashSharedByTwoRecords(t *testing.T) {
	h := shortHashOf("x")
	x := &shortIndex{loaded: true}
	x.committed([]shortKey{{h: h, ref: 9<<2 | 1}, {h: h + 1<<20, ref: 3 << 2}, {h: h, ref: 4<<2 | 2}}, nil, false)
	if len(x.keys) != 3 {
		t.Fatalf("index holds %d keys, want 3", len(x.keys))
	}
	if refs := x.prefixed(spell(h), 11); !slices.Equal(refs, []uint64{4<<2 | 2, 9<<2 | 1}) {
		t.Errorf("refs of the shared hash %v", refs)
	}
	out := map[string]string{}
	if !x.forms([]string{"x"}, out) || len(out) != 0 {
		t.Errorf("forms of a shared hash: %v", out)
	}
	x.committed(nil, []uint64{h + 1<<20}, false)
	if !x.loaded || len(x.keys) != 2 {
		t.Fatalf("after deleting an unshared hash: loaded %v, %d keys", x.loaded, len(x.keys))
	}
	x.committed(nil, []uint64{h}, false)
	if x.loaded {
		t.Error("a delete of a shared hash kept the index")
	}
}

// mergeShortKeys (a commit of more than 16 records) gives what inserting each key in turn
// gives: the keys sorted, each once, whatever the order and repeats of the added ones.
func TestMergeShortKeysIsInsertion(t *testing.T) {
	key := rapid.Custom(func(t *rapid.T) shortKey {
		return shortKey{h: rapid.Uint64Range(0, 40).Draw(t, "h"), ref: rapid.Uint64Range(0, 3).Draw(t, "ref")}
	})
	rapid.Check(t, func(t *rapid.T) {
		keys := slices.Compact(slices.SortedFunc(slices.Values(rapid.SliceOf(key).Draw(t, "keys")), cmpShortKeys))
		added := rapid.SliceOf(key).Draw(t, "added")
		want := slices.Clone(keys)
		for _, k := range added {
			if i, found := slices.BinarySearchFunc(want, k, cmpShortKeys); !found {
				want = slices.Insert(want, i, k)
			}
		}
		if got := mergeShortKeys(keys, added); !slices.Equal(got, want) {
			t.Fatalf("merged %v", got)
		}
	})
}

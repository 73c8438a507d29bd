package replica

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"github.com/memnode/memnode/store"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/memnode/memnode/memory"
)

// anyText draws strings of any bytes, not only valid UTF-8: JSON encoding replaces invalid
// bytes, and the list columns go through JSON in the row, which is where a rebuild could
// drift.
func anyText(t *rapid.T, label string) string {
	if rapid.Bool().Draw(t, label+" raw") {
		return string(rapid.SliceOfN(rapid.Byte(), 0, 12).Draw(t, label))
	}
	return rapid.StringN(0, 12, -1).Draw(t, label)
}

func anyList(t *rapid.T, label string) []string {
	n := rapid.IntRange(0, 3).Draw(t, label+" len")
	if n == 0 && rapid.Bool().Draw(t, label+" nil") {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = anyText(t, fmt.Sprintf("%s %d", label, i))
	}
	return out
}

func opsOf(tb testing.TB, r *Replica, origin string) []store.Op {
	tb.Helper()
	ops, err := r.OpsSince(context.Background(), origin, 0, 1_000_000)
	if err != nil {
		tb.Fatal(err)
	}
	return ops
}

func inRowCount(tb testing.TB, r *Replica) int {
	tb.Helper()
	var n int
	if err := r.ReadDB().QueryRow("SELECT COUNT(*) FROM ops WHERE inrow = 1 AND payload IS NULL").Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// TestObservationOpPayloadRebuiltByteExact: an observation op kept in its row is served by
// OpsSince as exactly the bytes it was written with (teams sign them; relays pass them on
// as they arrived), whatever the text (invalid UTF-8, JSON metacharacters, empty lists and
// nil ones). A payload the row cannot rebuild exactly — fields from a newer version,
// another key order, no origin — is kept as bytes and relayed unchanged.
func TestObservationOpPayloadRebuiltByteExact(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		pa, pb := filepath.Join(dir, fmt.Sprintf("a%d.db", n)), filepath.Join(dir, fmt.Sprintf("b%d.db", n))
		PlaceMigrated(t, pa)
		PlaceMigrated(t, pb)
		a, err := Open(ctx, Config{Path: pa, Origin: "dev-a"})
		if err != nil {
			rt.Fatal(err)
		}
		defer a.Close()
		b, err := Open(ctx, Config{Path: pb, Origin: "dev-b"})
		if err != nil {
			rt.Fatal(err)
		}
		defer b.Close()
		o := memory.Observation{SessionID: "s", Project: "p", Type: anyText(rt, "type"), Title: anyText(rt, "title"),
			Subtitle: anyText(rt, "subtitle"), Narrative: anyText(rt, "narrative"), Facts: anyList(rt, "facts"),
			Concepts: anyList(rt, "concepts"), FilesRead: anyList(rt, "read"), FilesModified: anyList(rt, "modified"),
			ToolName: anyText(rt, "tool"), PromptNumber: rapid.IntRange(0, 9).Draw(rt, "prompt"),
			DiscoveryTokens: rapid.IntRange(0, 9).Draw(rt, "tokens"), Model: anyText(rt, "model"), CreatedAt: 1_700_000_000_000}
		res, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{o}})
		if err != nil {
			rt.Fatal(err)
		}
		if len(res.Observations) != 1 {
			rt.Fatalf("stored %d observations", len(res.Observations))
		}
		want := encodeObservation(res.Observations[0]) // what the op carried before migration 7
		ops := opsOf(t, a, "dev-a")
		if len(ops) != 1 || !bytes.Equal(ops[0].Payload, want) {
			rt.Fatalf("served payload\n%q\nwant\n%q", ops[0].Payload, want)
		}
		// A relay: b stores what a served and serves it again, byte for byte.
		if _, err := b.ApplyOps(ctx, ops); err != nil {
			rt.Fatal(err)
		}
		if got := opsOf(t, b, "dev-a"); !bytes.Equal(got[0].Payload, want) {
			rt.Fatalf("relayed payload\n%q\nwant\n%q", got[0].Payload, want)
		}
		// A payload the row cannot rebuild: unknown fields and another key order.
		id := store.NewID(ops[0].HLC+1, "dev-c")
		odd := []byte(fmt.Sprintf(`{"title":"t","id":%q,"session_id":"s","project":"p","type":"x","created_at":5,"v":2,"new_field":[1,2]}`, id))
		if _, err := b.ApplyOps(ctx, []store.Op{{Origin: "dev-c", Seq: 1, HLC: ops[0].HLC + 1, Kind: store.OpObservation, RecordID: id, Payload: odd}}); err != nil {
			rt.Fatal(err)
		}
		if got := opsOf(t, b, "dev-c"); len(got) != 1 || !bytes.Equal(got[0].Payload, odd) {
			rt.Fatalf("a payload from a newer device relayed as %q, want %q", got[0].Payload, odd)
		}
	})
	a := openTemp(t, "dev-a")
	for i := range 3 {
		if _, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s", Project: "p", Type: "change", Title: fmt.Sprint("plain ", i), Facts: []string{"f"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if got := inRowCount(t, a); got != 3 {
		t.Fatalf("%d of 3 plain observation ops keep their payload in the row", got)
	}
}

func openTemp(tb testing.TB, origin string) *Replica {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), origin+".db")
	PlaceMigrated(tb, path)
	r, err := Open(context.Background(), Config{Path: path, Origin: origin})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// TestMigrationMovesObservationPayloadsIntoRows: a database of schema v6 (every op with its
// payload) is migrated: observation ops whose row rebuilds them exactly drop their payload,
// one the row cannot rebuild keeps it, and every op is served with the same bytes as before.
func TestMigrationMovesObservationPayloadsIntoRows(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v6.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := r.Commit(ctx, &store.Batch{
			Sessions:     []memory.Session{{ID: "s", Project: "p", StartedAt: 1}},
			Observations: []memory.Observation{{SessionID: "s", Project: "p", Type: "change", Title: fmt.Sprint("obs ", i), FilesRead: []string{"a.go"}}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	before := opsOf(t, r, "dev-a")
	r.Close()
	// Back to v6: payloads in the op rows, no inrow column; one payload the row cannot
	// rebuild (its keys reordered).
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range opsAtV15 {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	odd := -1
	for i, op := range before {
		p := op.Payload
		if op.Kind == store.OpObservation && odd < 0 {
			odd = i
			p = append([]byte(`{"title":`+fmt.Sprintf("%q", "obs 0")+`,`), bytes.TrimPrefix(p, []byte("{"))...)
			p = bytes.Replace(p, []byte(`,"title":"obs 0"`), nil, 1)
			before[i].Payload = p
		}
		if _, err := db.Exec("UPDATE ops SET payload = ? WHERE origin = ? AND seq = ?", p, op.Origin, op.Seq); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{"ALTER TABLE ops DROP COLUMN inrow", "DELETE FROM schema_version WHERE version >= 7"} { // the later migrations run again
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	r, err = Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if v, err := r.SchemaVersion(ctx); err != nil || v < 7 {
		t.Fatalf("schema version %d, %v", v, err)
	}
	if got := inRowCount(t, r); got != 3 {
		t.Fatalf("%d observation ops moved into their rows, want 3 (the fourth cannot be rebuilt exactly)", got)
	}
	after := opsOf(t, r, "dev-a")
	if len(after) != len(before) {
		t.Fatalf("%d ops after the migration, %d before", len(after), len(before))
	}
	for i := range before {
		if !bytes.Equal(after[i].Payload, before[i].Payload) {
			t.Fatalf("op %d served as %q after the migration, %q before", i, after[i].Payload, before[i].Payload)
		}
	}
}

// FuzzListsSurviveRow: the cheap in-row decision of a new observation's op agrees with
// rebuilding the payload from what the row gives back and comparing the bytes.
func FuzzListsSurviveRow(f *testing.F) {
	for _, seed := range [][2]string{{"", ""}, {"plain fact", "internal/auth/middleware.go"}, {"\xff", "ok"},
		{"a\u2028b", "<tag>&amp;"}, {"\xed\xa0\x80", "x"}, {"\ufffd", "\x00"}, {`"quoted" \ back`, "\xc3"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		o := memory.Observation{ID: "01ID", SessionID: "s", Project: "p", Type: "change", Title: a, CreatedAt: 1,
			Facts: []string{a}, Concepts: []string{b, a}, FilesRead: []string{b}}
		if a == "" {
			o.FilesModified = []string{}
		}
		want := bytes.Equal(rowPayload(o), encodeObservation(o))
		if got := listsSurviveRow(o); got != want {
			t.Fatalf("listsSurviveRow = %v, the rebuilt payload equal = %v, for %q %q", got, want, a, b)
		}
	})
}

// TestPromptAndSummaryOpsRebuildFromTheRow: since schema 18 prompt and summary ops keep their
// payload in the record row too, through every way one is written — Commit, Import, an
// op applied from a peer, a snapshot installed — and OpsSince serves the bytes the op was
// written with, whatever the text. A peer's payload the row cannot rebuild exactly keeps its
// bytes; a forgotten prompt's op serves no payload.
func TestPromptAndSummaryOpsRebuildFromTheRow(t *testing.T) {
	ctx := context.Background()
	a, b := openTemp(t, "dev-a"), openTemp(t, "dev-b")
	inRow := func(r *Replica, id string) bool {
		var n int
		if err := r.ReadDB().QueryRow("SELECT COUNT(*) FROM ops WHERE record_id = ? AND inrow = 1 AND payload IS NULL", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	// served checks that r serves the ops of want's records as want has them, each kept in
	// the row unless kept[id] is false.
	served := func(rt *rapid.T, r *Replica, what string, want map[string][]byte, kept map[string]bool) {
		rt.Helper()
		for _, op := range opsOf(t, r, "dev-a") {
			w, ok := want[op.RecordID]
			if !ok || op.Kind == store.OpSession {
				continue
			}
			if !bytes.Equal(op.Payload, w) {
				rt.Fatalf("%s: %s op %s served\n%q\nwant\n%q", what, op.Kind, op.RecordID, op.Payload, w)
			}
			delete(want, op.RecordID)
			if got := inRow(r, op.RecordID); got != kept[op.RecordID] {
				rt.Fatalf("%s: %s op %s kept in the row: %v, want %v", what, op.Kind, op.RecordID, got, kept[op.RecordID])
			}
		}
		if len(want) != 0 {
			rt.Fatalf("%s: no op served for %v", what, slices.Collect(maps.Keys(want)))
		}
	}
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		sess := fmt.Sprint("s", n)
		at := int64(1_700_000_000_000 + n*10)
		p := memory.Prompt{SessionID: sess, Project: "p", PromptNumber: rapid.IntRange(0, 9).Draw(rt, "number"), Text: anyText(rt, "text"), CreatedAt: at}
		s := memory.Summary{SessionID: sess, Project: "p", Request: anyText(rt, "request"), Investigated: anyText(rt, "investigated"),
			Learned: anyText(rt, "learned"), Completed: anyText(rt, "completed"), NextSteps: anyText(rt, "next"), Notes: anyText(rt, "notes"),
			DiscoveryTokens: rapid.IntRange(0, 9).Draw(rt, "tokens"), Model: anyText(rt, "model"), CreatedAt: at + 1}
		res, err := a.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: sess, Project: "p"}}, Prompts: []memory.Prompt{p}, Summaries: []memory.Summary{s}})
		if err != nil {
			rt.Fatal(err)
		}
		if len(res.Prompts) != 1 || len(res.Summaries) != 1 {
			rt.Fatalf("stored %d prompts and %d summaries; want 1 and 1", len(res.Prompts), len(res.Summaries))
		}
		imp := memory.Prompt{ID: store.ImportID(at+2, sess), SessionID: sess, Project: "p", Text: anyText(rt, "imported"), CreatedAt: at + 2}
		if _, err := a.Import(ctx, &store.ImportBatch{Prompts: []memory.Prompt{imp}}); err != nil {
			rt.Fatal(err)
		}
		cur, _, err := a.Lookup(ctx, imp.ID)
		if err != nil || cur.Prompt == nil {
			rt.Fatalf("imported prompt: %+v, %v", cur, err)
		}
		// What a serves is the encoding of what it stored.
		want := map[string][]byte{res.Prompts[0].ID: encodePrompt(res.Prompts[0]), res.Summaries[0].ID: encodeSummary(res.Summaries[0]),
			imp.ID: encodePrompt(*cur.Prompt)}
		all := map[string]bool{res.Prompts[0].ID: true, res.Summaries[0].ID: true, imp.ID: true}
		served(rt, a, "written", maps.Clone(want), all)
		// A relay: b applies what a served and serves it again, byte for byte. Its rows
		// rebuild a payload only if this build encodes what it decodes from it the same way:
		// not when a's text held invalid UTF-8, which a's JSON wrote as an escaped U+FFFD and
		// b's writes as the character itself.
		var relay []store.Op
		exact := map[string]bool{}
		vv, err := b.VersionVector(ctx)
		if err != nil {
			rt.Fatal(err)
		}
		for _, op := range opsOf(t, a, "dev-a") {
			if op.Seq <= vv["dev-a"] {
				continue
			}
			relay = append(relay, op)
			switch op.Kind {
			case store.OpPrompt:
				p, _ := decodePrompt(op.Payload)
				exact[op.RecordID] = bytes.Equal(encodePrompt(p), op.Payload)
			case store.OpSummary:
				s, _ := decodeSummary(op.Payload)
				exact[op.RecordID] = bytes.Equal(encodeSummary(s), op.Payload)
			}
		}
		if _, err := b.ApplyOps(ctx, relay); err != nil {
			rt.Fatal(err)
		}
		served(rt, b, "relayed", maps.Clone(want), exact)
	})
	// A new device installs a's snapshot and serves every op as a does, each kept in the row
	// as a keeps it.
	c := openTemp(t, "dev-c")
	var chunks []store.SnapshotChunk
	if err := a.Snapshot(ctx, store.SnapshotCursor{}, 64<<10, func(ch store.SnapshotChunk) error { chunks = append(chunks, ch); return nil }); err != nil {
		t.Fatal(err)
	}
	k := 0
	if _, err := c.InstallSnapshot(ctx, func() (store.SnapshotChunk, error) { k++; return chunks[k-1], nil }); err != nil {
		t.Fatal(err)
	}
	fromA, fromC := opsOf(t, a, "dev-a"), opsOf(t, c, "dev-a")
	if !slices.EqualFunc(fromA, fromC, func(x, y store.Op) bool {
		return x.Seq == y.Seq && x.Kind == y.Kind && bytes.Equal(x.Payload, y.Payload)
	}) {
		t.Fatalf("the installed device serves %d ops unlike the %d of its source", len(fromC), len(fromA))
	}
	if ia, ic := inRowCount(t, a), inRowCount(t, c); ia != ic || ia < 3*n {
		t.Fatalf("ops kept in the row: %d on the source, %d installed; want the same, at least %d", ia, ic, 3*n)
	}
	// A payload the row cannot rebuild exactly: unknown fields and another key order.
	id := store.NewID(1<<40, "dev-d")
	odd := []byte(fmt.Sprintf(`{"text":"t","id":%q,"session_id":"s","project":"p","created_at":5,"v":2,"new_field":[1,2]}`, id))
	if _, err := b.ApplyOps(ctx, []store.Op{{Origin: "dev-d", Seq: 1, HLC: 1 << 40, Kind: store.OpPrompt, RecordID: id, Payload: odd}}); err != nil {
		t.Fatal(err)
	}
	if got := opsOf(t, b, "dev-d"); len(got) != 1 || !bytes.Equal(got[0].Payload, odd) {
		t.Fatalf("a prompt payload from a newer device relayed as %q, want %q", got[0].Payload, odd)
	}
	if cur, _, err := b.Lookup(ctx, id); err != nil || cur.Prompt == nil || cur.Prompt.Text != "t" {
		t.Fatalf("the newer device's prompt is not stored: %+v, %v", cur, err)
	}
	// Forgetting a prompt leaves its op without a payload, served as nil.
	var forgotten string
	for _, op := range fromA {
		if op.Kind == store.OpPrompt {
			forgotten = op.RecordID
			break
		}
	}
	if _, err := a.Forget(ctx, []string{forgotten}); err != nil {
		t.Fatal(err)
	}
	for _, op := range opsOf(t, a, "dev-a") {
		if op.Kind == store.OpPrompt && op.RecordID == forgotten && op.Payload != nil {
			t.Fatalf("a forgotten prompt's op still serves %q", op.Payload)
		}
	}
}

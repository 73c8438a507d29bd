package importer_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

const sampleDB = "../testdata/fixtures/claude-mem/claude-mem-13.25.3-sample.db"

func claudeMemRecords(tb testing.TB) []importer.Record {
	tb.Helper()
	ctx := context.Background()
	cm, err := importer.OpenClaudeMem(ctx, sampleDB)
	if err != nil {
		tb.Fatal(err)
	}
	defer cm.Close()
	n, err := cm.Count(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var recs []importer.Record
	if err := cm.Each(ctx, func(r importer.Record) error { recs = append(recs, r); return nil }); err != nil {
		tb.Fatal(err)
	}
	if len(recs) != n {
		tb.Fatalf("Count said %d, Each gave %d", n, len(recs))
	}
	return recs
}

func TestClaudeMemConversion(t *testing.T) {
	recs := claudeMemRecords(t)
	kinds := map[string]int{}
	var webhook *memory.Observation
	for _, r := range recs {
		kinds[r.Kind]++
		if r.Observation != nil && r.Observation.Title == "Idempotency keys for Stripe webhook" {
			webhook = r.Observation
		}
	}
	if kinds["session"] != 4 || kinds["prompt"] != 4 || kinds["observation"] != 9 || kinds["summary"] != 4 {
		t.Fatalf("kinds %v", kinds)
	}
	if webhook == nil {
		t.Fatal("webhook observation missing")
	}
	w := *webhook
	if w.Project != "billing-api" || w.Type != "feature" || w.SessionID != "c-0002" || w.CreatedAt != 1790881680000 ||
		len(w.Facts) == 0 || len(w.FilesModified) != 2 || w.FilesModified[1] != "db/migrations/0042_processed_events.sql" ||
		len(w.Concepts) != 2 || w.Subtitle == "" || w.Narrative == "" || w.DiscoveryTokens != 1444 || w.Origin != importer.ClaudeMemOrigin {
		t.Fatalf("webhook observation %+v", w)
	}
	again := claudeMemRecords(t)
	for i := range recs {
		if recs[i].Kind != "session" && recordID(recs[i]) != recordID(again[i]) {
			t.Fatalf("IDs are not deterministic: %s vs %s", recordID(recs[i]), recordID(again[i]))
		}
	}
}

func recordID(r importer.Record) string {
	switch {
	case r.Observation != nil:
		return r.Observation.ID
	case r.Prompt != nil:
		return r.Prompt.ID
	case r.Summary != nil:
		return r.Summary.ID
	case r.Session != nil:
		return r.Session.ID
	}
	return r.ID
}

func TestOpenClaudeMemRejectsOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "memnode.db")
	r2, err := replica.Open(context.Background(), replica.Config{Path: path, Origin: "b"})
	if err != nil {
		t.Fatal(err)
	}
	r2.Close()
	if _, err := importer.OpenClaudeMem(context.Background(), path); !errors.Is(err, importer.ErrNotClaudeMem) {
		t.Fatalf("a memnode db opened as claude-mem: %v", err)
	}
	if _, err := importer.OpenClaudeMem(context.Background(), filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Fatal("missing file opened")
	}
}

func exportAll(t *testing.T, r *replica.Replica) string {
	t.Helper()
	var buf bytes.Buffer
	if _, err := importer.Export(context.Background(), r, &buf, "", time.UnixMilli(1)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func readAll(t *testing.T, s string) []importer.Record {
	t.Helper()
	rd := importer.NewReader(strings.NewReader(s))
	var out []importer.Record
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rec)
	}
}

// TestExportImportRoundTrip: export → import into a fresh replica → export gives the same
// records, including IDs, origins, stamps, device names and tombstones.
func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	a := testkit.OpenReplica(t, "dev-a")
	if _, err := a.Import(ctx, importer.Batch(claudeMemRecords(t))); err != nil {
		t.Fatal(err)
	}
	if err := a.SetDeviceName(ctx, "dev-a", "laptop"); err != nil {
		t.Fatal(err)
	}
	res, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s9", Project: "p",
		Type: "decision", Title: "Use ünïcode 😀 and \"quotes\"", Facts: []string{"a", "b"}, CreatedAt: 1700000000000}}})
	if err != nil || len(res.Observations) != 1 {
		t.Fatal(err)
	}
	if _, err := a.Forget(ctx, []string{readAll(t, exportAll(t, a))[10].Observation.ID}); err != nil {
		t.Fatal(err)
	}
	// A correction: its record and its link (version 2) travel too.
	wrong, err := a.Commit(ctx, &store.Batch{Observations: []memory.Observation{{SessionID: "s9", Project: "p",
		Type: "decision", Title: "Use Latin-1", CreatedAt: 1700000000000}}})
	if err != nil || len(wrong.Observations) != 1 {
		t.Fatal(err)
	}
	if _, err := a.Correct(ctx, wrong.Observations[0].ID, memory.Observation{SessionID: "manual:p", Project: "p", Type: "correction",
		Title: "Use plain ASCII", CreatedAt: 1700000000001}); err != nil {
		t.Fatal(err)
	}
	first := exportAll(t, a)
	if strings.Count(first, `{"kind":"supersede","supersede":{"old":"`+wrong.Observations[0].ID+`","new":"`) != 1 {
		t.Fatalf("the export lacks the correction's link:\n%s", first)
	}

	b := testkit.OpenReplica(t, "dev-b")
	got, err := b.Import(ctx, importer.Batch(readAll(t, first)))
	if err != nil {
		t.Fatal(err)
	}
	if got.Observations != 11 || got.Tombstones != 1 || got.Devices != 1 || got.Supersedes != 1 {
		t.Fatalf("import %+v", got)
	}
	second := exportAll(t, b)
	if first != second {
		t.Fatalf("round trip changed the export:\n--- first\n%s\n--- second\n%s", first, second)
	}
	again, err := b.Import(ctx, importer.Batch(readAll(t, first)))
	if err != nil || again.Observations+again.Prompts+again.Summaries+again.Sessions+again.Devices+again.Tombstones+again.Supersedes != 0 {
		t.Fatalf("re-import changed something: %+v %v", again, err)
	}
	// Imported records became ops of the importing device, so they sync.
	vv, _ := b.VersionVector(ctx)
	if vv["dev-b"] == 0 {
		t.Fatal("import produced no ops")
	}
}

func TestReaderRejectsBadLines(t *testing.T) {
	for _, in := range []string{
		`{"kind":"observation"}`,
		`{"kind":"observation","observation":{"title":"no id"}}`,
		`{"kind":"mystery"}`,
		`{"kind":"header","header":{"format":"memnode-export","version":99}}`,
		`{"kind":"prompt","prompt":{"id":"x"},"extra":1}`,
		`{"kind":"supersede","supersede":{"old":"A","new":"A"}}`,
		`{"kind":"supersede","supersede":{"old":"A"}}`,
		`{"kind":"supersede"}`,
		`not json`,
	} {
		if _, err := importer.NewReader(strings.NewReader(in + "\n")).Next(); !errors.Is(err, importer.ErrFormat) {
			t.Errorf("%s: want ErrFormat, got %v", in, err)
		}
	}
}

// TestReaderReadsGzip: an export kept compressed (.jsonl.gz, or piped through gzip) reads the
// same records as the plain file; a gzip header over junk is a format error, not a panic or
// a JSON error about byte 0x1f.
func TestReaderReadsGzip(t *testing.T) {
	var plain bytes.Buffer
	w := importer.NewWriter(&plain)
	for i := range 3 {
		at := int64(1700000000000 + i*1000)
		w.Write(importer.Record{Kind: importer.KindObservation, Observation: &memory.Observation{
			ID: store.ImportID(at, fmt.Sprint(i)), SessionID: "s", Project: "p", Type: "change",
			Title: fmt.Sprintf("record %d", i), CreatedAt: at, Origin: "o", HLC: uint64(at) << 16}})
	}
	w.Flush()
	var packed bytes.Buffer
	z := gzip.NewWriter(&packed)
	z.Write(plain.Bytes())
	z.Close()
	read := func(data []byte) []string {
		t.Helper()
		var titles []string
		rd := importer.NewReader(bytes.NewReader(data))
		for {
			rec, err := rd.Next()
			if errors.Is(err, io.EOF) {
				return titles
			}
			if err != nil {
				t.Fatal(err)
			}
			titles = append(titles, rec.Observation.Title)
		}
	}
	want, got := read(plain.Bytes()), read(packed.Bytes())
	if len(want) != 3 || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("gzip read %q, plain %q", got, want)
	}
	if _, err := importer.NewReader(strings.NewReader("\x1f\x8bnot gzip at all")).Next(); !errors.Is(err, importer.ErrFormat) {
		t.Fatalf("a broken gzip file: %v, want ErrFormat", err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add(`{"kind":"observation","observation":{"id":"A","title":"t","created_at":1}}`)
	f.Add(`{"kind":"tombstone","id":"x"}` + "\n\n" + `{"kind":"device","device":{"origin":"o","name":"n"}}`)
	f.Add("{\"kind\":\"header\",\"header\":{\"format\":\"memnode-export\",\"version\":1}}\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		rd := importer.NewReader(strings.NewReader(s))
		for i := 0; i < 1000; i++ {
			rec, err := rd.Next()
			if err != nil {
				return
			}
			if err := rec.Validate(); err != nil {
				t.Fatalf("Next returned an invalid record: %v", err)
			}
			importer.Batch([]importer.Record{rec})
		}
	})
}

// BenchmarkImport measures JSONL decode + replica import, in batches of 1000 records.
func BenchmarkImport(b *testing.B) {
	var buf bytes.Buffer
	w := importer.NewWriter(&buf)
	const n = 10000
	for i := 0; i < n; i++ {
		at := int64(1700000000000 + i*1000)
		w.Write(importer.Record{Kind: importer.KindObservation, Observation: &memory.Observation{
			ID: store.ImportID(at, fmt.Sprint(i)), SessionID: fmt.Sprintf("s%d", i/50), Project: "bench", Type: "change",
			Title:     fmt.Sprintf("Refactored handler %d to stream responses", i),
			Narrative: strings.Repeat("The handler now streams rows to the client instead of buffering them in memory. ", 4),
			Facts:     []string{"peak memory fell", "latency unchanged"}, FilesModified: []string{fmt.Sprintf("internal/h%d.go", i%200)},
			CreatedAt: at, Origin: "bench", HLC: uint64(at) << 16}})
	}
	w.Flush()
	data := buf.Bytes()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := testkit.OpenReplica(b, "dev")
		b.StartTimer()
		rd := importer.NewReader(bytes.NewReader(data))
		batch := make([]importer.Record, 0, 1000)
		flush := func() {
			if _, err := r.Import(context.Background(), importer.Batch(batch)); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
		for {
			rec, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if batch = append(batch, rec); len(batch) == cap(batch) {
				flush()
			}
		}
		flush()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
}

// An export written by the version-1 writer (when the lines were the domain records
// themselves; testdata/export-v1.jsonl) still imports, every record and field intact: a
// fresh replica that imports it exports the same bytes.
func TestPreviousFormatStillImports(t *testing.T) {
	old, err := os.ReadFile("testdata/export-v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, string(old))
	kinds := map[string]int{}
	for _, r := range recs {
		kinds[r.Kind]++
	}
	if kinds[importer.KindObservation] != 9 || kinds[importer.KindSummary] != 5 || kinds[importer.KindTombstone] != 1 || kinds[importer.KindDevice] != 1 {
		t.Fatalf("read %v from the v1 export", kinds)
	}
	r := testkit.OpenReplica(t, "dev-c")
	res, err := r.Import(context.Background(), importer.Batch(recs))
	if err != nil {
		t.Fatal(err)
	}
	if res.Observations != 9 || res.Prompts != 5 || res.Sessions != 5 || res.Tombstones != 1 {
		t.Fatalf("import %+v", res)
	}
	// The re-export is the same lines under this build's header version.
	if got := strings.Replace(exportAll(t, r), fmt.Sprintf(`"version":%d`, importer.FormatVersion), `"version":1`, 1); got != string(old) {
		t.Fatalf("re-export differs from the v1 file:\n--- v1\n%s\n--- now\n%s", old, got)
	}
}

// A claude-mem database in a folder whose name holds '#' or '?' is read, not refused as
// missing or mistaken for another file: the path goes into SQLite's URI escaped.
func TestOpenClaudeMemAtAPathWithURICharacters(t *testing.T) {
	want := len(claudeMemRecords(t))
	data, err := os.ReadFile(sampleDB)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "old #1?v=2")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "claude-mem.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cm, err := importer.OpenClaudeMem(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Close()
	if n, err := cm.Count(ctx); err != nil || n != want {
		t.Fatalf("Count = %d, %v; want %d", n, err, want)
	}
}

package recall_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/search/recall"
)

const conversation = `{
  "speaker_a": "Evan", "speaker_b": "Sam",
  "session_2_date_time": "1:14 pm on 25 May, 2023",
  "session_2": [{"speaker": "Evan", "dia_id": "D2:1", "text": "My Prius broke down again."}],
  "session_1_date_time": "1:56 pm on 8 May, 2023",
  "session_1": [
    {"speaker": "Evan", "dia_id": "D1:1", "text": "I just bought a new car!"},
    {"speaker": "Sam", "dia_id": "D1:2", "text": "Nice, show me.", "blip_caption": "a photo of a blue prius"}
  ],
  "qa": [
    {"question": "What kind of car does Evan drive?", "answer": "Prius", "evidence": ["D1:1", "D2:1"], "category": 1},
    {"question": "What did Sam see?", "evidence": ["D1:2; D9:9"], "category": 4},
    {"question": "Never said", "adversarial_answer": "x", "evidence": [], "category": 5},
    {"question": "Unknown turn", "evidence": ["D7:7"], "category": 2}
  ]
}`

func TestParseConversation(t *testing.T) {
	docs, qs, err := recall.ParseConversation("p", []byte(conversation))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range docs {
		ids = append(ids, d.ID)
	}
	if !slices.Equal(ids, []string{"D1:1", "D1:2", "D2:1"}) {
		t.Fatalf("turns in session order: got %v", ids)
	}
	if docs[1].Text != "Sam: Nice, show me. [shares a photo: a photo of a blue prius]" {
		t.Errorf("turn text: %q", docs[1].Text)
	}
	if !(docs[0].Time < docs[1].Time && docs[1].Time < docs[2].Time) {
		t.Errorf("turn times do not follow the sessions: %d %d %d", docs[0].Time, docs[1].Time, docs[2].Time)
	}
	// Category 5 and evidence naming no turn are left out; "D1:2; D9:9" keeps the known ID.
	if len(qs) != 2 || qs[0].Category != 1 || !slices.Equal(qs[0].Evidence, []string{"D1:1", "D2:1"}) ||
		!slices.Equal(qs[1].Evidence, []string{"D1:2"}) || qs[1].Project != "p" {
		t.Fatalf("questions: %+v", qs)
	}
}

func TestParseConversationRejectsGarbage(t *testing.T) {
	for _, in := range []string{``, `[]`, `{"session_1": {"a": 1}}`, `{"qa": 3}`} {
		if _, _, err := recall.ParseConversation("p", []byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func FuzzParseConversation(f *testing.F) {
	f.Add([]byte(conversation))
	f.Add([]byte(`{"conversation": {"session_1": []}, "qa": []}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, qs, err := recall.ParseConversation("p", data)
		if err != nil {
			return
		}
		known := map[string]bool{}
		for _, d := range docs {
			if known[d.ID] {
				t.Fatalf("turn %s twice", d.ID)
			}
			known[d.ID] = true
		}
		for _, q := range qs {
			if len(q.Evidence) == 0 {
				t.Fatal("a question without evidence")
			}
			for _, e := range q.Evidence {
				if !known[e] {
					t.Fatalf("evidence %s names no turn", e)
				}
			}
		}
	})
}

// fixed answers the same ranking to every question.
type fixed []string

func (f fixed) Search(context.Context, string, string, int) ([]string, error) { return f, nil }

func TestEvaluateScores(t *testing.T) {
	set := &recall.Set{Questions: []recall.Question{
		{Category: 1, Evidence: []string{"a", "z"}}, // a at rank 2: recall 1/2, RR 1/2
		{Category: 2, Evidence: []string{"f"}},      // f at rank 6: recall@5 0, @10 1, RR 1/6
	}}
	r, err := recall.Evaluate(context.Background(), "fixed", set, fixed{"x", "a", "b", "c", "d", "f"})
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	if r.All.Questions != 2 || !near(r.All.Recall5, 0.25) || !near(r.All.Recall10, 0.75) || !near(r.All.MRR, (0.5+1.0/6)/2) {
		t.Errorf("overall: %+v", r.All)
	}
	if c := r.ByCategory[2]; !near(c.Recall5, 0) || !near(c.Recall10, 1) {
		t.Errorf("category 2: %+v", c)
	}
	var b strings.Builder
	if err := recall.WriteTable(&b, "t", []recall.Report{r}); err != nil || !strings.Contains(b.String(), "0.250") {
		t.Errorf("table: %v\n%s", err, b.String())
	}
}

func baselineSet() *recall.Set {
	return &recall.Set{Name: "t", Docs: []recall.Doc{
		{ID: "1", Project: "p", Text: "Evan: what kind of day does it feel like"},
		{ID: "2", Project: "p", Text: "Evan: my car is a Prius, it drives well"},
		{ID: "3", Project: "p", Text: "Sam: does it? what kind of thing is that"},
		{ID: "4", Project: "q", Text: "Evan: I drive a car too"},
	}}
}

// Both baselines rank within the question's project only.
func TestBaselinesSearchTheProject(t *testing.T) {
	ctx := context.Background()
	set := baselineSet()
	fts, err := recall.NewFTS5(ctx, filepath.Join(t.TempDir(), "b.db"), set)
	if err != nil {
		t.Fatal(err)
	}
	defer fts.Close()
	for name, e := range map[string]recall.Engine{"bm25": recall.NewBM25(set), "fts5": fts} {
		got, err := e.Search(ctx, "p", "Which car?", 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []string{"2"}) {
			t.Errorf("%s: got %v, want [2]", name, got)
		}
		for _, id := range got {
			if id == "4" {
				t.Errorf("%s: returned a document of another project", name)
			}
		}
	}
}

// The coding-memory set guards the project's own questions: memnode's FTS ranking must
// find what they ask for, exact identifiers (calculateTax, invalid_token) included.
func TestCodingMemorySet(t *testing.T) {
	set := codingSet(t)
	ctx := context.Background()
	rep := testkit.OpenReplica(t, "coding")
	ids, err := recall.ImportDocs(ctx, rep, set)
	if err != nil {
		t.Fatal(err)
	}
	s := search.New(rep, search.Config{})
	defer s.Close()
	e := recall.NewMemnode(s, search.ModeFTS, ids)
	r, err := recall.Evaluate(ctx, "memnode fts", set, e)
	if err != nil {
		t.Fatal(err)
	}
	if r.All.Questions != len(set.Questions) || r.All.Recall5 < 0.94 || r.All.MRR < 0.95 {
		miss, _ := recall.Failures(ctx, set, e, 5)
		t.Errorf("coding memory: %+v; missed in the top 5: %+v", r.All, miss)
	}
	for _, q := range []string{"calculateTax", "invalid_token"} {
		got, err := e.Search(ctx, "billing-api", q, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("%s: %v %v", q, got, err)
		}
	}
}

// writeHistory writes a gzipped export holding one observation and returns its path.
func writeHistory(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	io.WriteString(gz, `{"kind": "header", "header": {"format": "memnode-export", "version": 1, "exported_at": 0}}
{"kind": "session", "session": {"id": "S1", "project": "caddy", "platform": "claude-code", "started_at": 1, "status": "completed"}}
{"kind": "observation", "observation": {"id": "O1", "session_id": "S1", "project": "caddy", "type": "bugfix", "title": "Fix OnLoad hook", "narrative": "n", "files_modified": ["caddy.go"], "created_at": 2}}
`)
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "corpus.jsonl.gz")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadCodingHistory(t *testing.T) {
	corpus := writeHistory(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"questions": [{"project": "caddy", "text": "module load hook", "expect": ["O1"]}]}`), 0o600)
	set, err := recall.LoadCodingHistory(corpus, good)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Records) != 2 || len(set.Docs) != 1 || set.Docs[0].ID != "O1" || !strings.Contains(set.Docs[0].Text, "caddy.go") ||
		len(set.Questions) != 1 || !slices.Equal(set.Questions[0].Evidence, []string{"O1"}) {
		t.Fatalf("set: %d records, docs %+v, questions %+v", len(set.Records), set.Docs, set.Questions)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"questions": [{"project": "caddy", "text": "x", "expect": ["O2"]}]}`), 0o600)
	if _, err := recall.LoadCodingHistory(corpus, bad); err == nil || !strings.Contains(err.Error(), "O2") {
		t.Fatalf("a question naming no observation: %v", err)
	}
}

// TestCodingHistoryQuestions checks the committed question set against the shared corpus
// (skipped where ../shared is absent): every target is an observation of the corpus.
func TestCodingHistoryQuestions(t *testing.T) {
	path := filepath.Join("..", "..", "..", "shared", "data", "coding-history", "corpus.jsonl.gz")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no coding history at %s", path)
	}
	set, err := recall.LoadCodingHistory(path, filepath.Join("testdata", "coding-history.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Questions) < 150 {
		t.Fatalf("%d questions, want at least 150", len(set.Questions))
	}
}

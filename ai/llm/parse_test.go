package llm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/memory"
)

func TestParseObservations(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    int
		wantErr error
		check   func(t *testing.T, obs []ai.Observation)
	}{
		{name: "empty means skip", in: "  \n ", want: 0},
		{name: "prose only is bad output", in: "Skipping, nothing to record.", wantErr: ErrBadOutput},
		{name: "full block with prose around", in: goodObservation + "\nThanks!", want: 1, check: func(t *testing.T, obs []ai.Observation) {
			o := obs[0]
			if o.Type != memory.TypeBugfix || o.Title != "Fix nil map write in budget store" || len(o.Facts) != 2 ||
				o.FilesModified[0] != "ai/llm/budget.go" || o.Concepts[0] != "budget" || o.Narrative == "" {
				t.Fatalf("parsed %+v", o)
			}
		}},
		{name: "two blocks, second cut by max tokens", in: goodObservation + "<observation><type>decision</type><title>Use kernel keyring</title><narrative>Because head", want: 2, check: func(t *testing.T, obs []ai.Observation) {
			if obs[1].Type != memory.TypeDecision || obs[1].Title != "Use kernel keyring" || obs[1].Narrative != "Because head" {
				t.Fatalf("partial block: %+v", obs[1])
			}
		}},
		{name: "unknown type, no title, bullets", in: "<observation>\n<type>Investigation</type>\n<narrative>Found the race in Settle.\nMore.</narrative>\n<facts>\n- one\n* two\n</facts></observation>", want: 1, check: func(t *testing.T, obs []ai.Observation) {
			o := obs[0]
			if o.Type != memory.TypeChange || o.Title != "Found the race in Settle." || len(o.Facts) != 2 || o.Facts[1] != "two" {
				t.Fatalf("parsed %+v", o)
			}
		}},
		{name: "entities and cdata", in: "<OBSERVATION><title>a &lt;b&gt; &amp; c</title><narrative><![CDATA[x < y]]></narrative></OBSERVATION>", want: 1, check: func(t *testing.T, obs []ai.Observation) {
			if obs[0].Title != "a <b> & c" || obs[0].Narrative != "x < y" {
				t.Fatalf("parsed %+v", obs[0])
			}
		}},
		{name: "empty block is dropped", in: "<observation></observation>", want: 0},
		{name: "observations wrapper is not a block", in: "<observations><observation><title>t</title></observation></observations>", want: 1},
		{name: "bare fields without wrapper", in: "<type>feature</type><title>Add chain</title>", want: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obs, err := ParseObservations(c.in)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("err = %v, want %v", err, c.wantErr)
				}
				return
			}
			if err != nil || len(obs) != c.want {
				t.Fatalf("got %d obs, err %v; want %d", len(obs), err, c.want)
			}
			if c.check != nil {
				c.check(t, obs)
			}
		})
	}
}

func TestParseSummary(t *testing.T) {
	s, err := ParseSummary("Sure.\n" + goodSummary)
	if err != nil || s.Learned != "Gemini reports quota as 500" || s.NextSteps != "wire into node" {
		t.Fatalf("summary %+v err %v", s, err)
	}
	if _, err := ParseSummary(""); !errors.Is(err, ErrEmptyAnswer) {
		t.Fatalf("empty: %v", err)
	}
	if _, err := ParseSummary("no xml here"); !errors.Is(err, ErrBadOutput) {
		t.Fatalf("prose: %v", err)
	}
	s, err = ParseSummary("<summary><request>r</request><completed>half")
	if err != nil || s.Request != "r" || s.Completed != "half" {
		t.Fatalf("partial summary %+v err %v", s, err)
	}
}

// checkObservations holds for every parse result, whatever the input.
func checkObservations(t *testing.T, in string, obs []ai.Observation, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrBadOutput) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if obs != nil {
			t.Fatalf("observations with an error")
		}
		return
	}
	if strings.TrimSpace(in) == "" && len(obs) != 0 {
		t.Fatalf("empty input gave observations")
	}
	if len(obs) > maxBlocks {
		t.Fatalf("%d blocks", len(obs))
	}
	valid := map[string]bool{memory.TypeBugfix: true, memory.TypeFeature: true, memory.TypeRefactor: true, memory.TypeChange: true, memory.TypeDiscovery: true, memory.TypeDecision: true}
	for _, o := range obs {
		if o.Title == "" || !valid[o.Type] {
			t.Fatalf("invalid observation %+v", o)
		}
		if len(o.Title) > maxTitle+len("…") || len(o.Narrative) > maxField+len("…") || len(o.Facts) > maxListItems {
			t.Fatalf("unbounded field in %+v", o)
		}
		if utf8.ValidString(in) && (!utf8.ValidString(o.Title) || !utf8.ValidString(o.Narrative)) {
			t.Fatalf("valid UTF-8 in, invalid out: %q", o.Title)
		}
	}
}

func FuzzParseObservations(f *testing.F) {
	addSeeds(f, "observations")
	f.Fuzz(func(t *testing.T, in string) {
		obs, err := ParseObservations(in)
		checkObservations(t, in, obs, err)
	})
}

func FuzzParseSummary(f *testing.F) {
	addSeeds(f, "summaries")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSummary(in)
		if err != nil {
			if !errors.Is(err, ErrBadOutput) && !errors.Is(err, ErrEmptyAnswer) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if s == (ai.Summary{}) {
			t.Fatalf("success with an empty summary")
		}
		for _, v := range []string{s.Request, s.Investigated, s.Learned, s.Completed, s.NextSteps, s.Notes} {
			if len(v) > maxField+len("…") {
				t.Fatalf("unbounded field (%d bytes)", len(v))
			}
		}
	})
}

// addSeeds adds every file of testdata/<dir> (real and broken model answers) to the corpus.
func addSeeds(f *testing.F, dir string) {
	f.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "*"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seeds in testdata/%s: %v", dir, err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}

func TestSeedsParse(t *testing.T) {
	for _, dir := range []string{"observations", "summaries"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*"))
		for _, p := range files {
			b, _ := os.ReadFile(p)
			if dir == "observations" {
				obs, err := ParseObservations(string(b))
				checkObservations(t, string(b), obs, err)
			} else {
				_, _ = ParseSummary(string(b))
			}
		}
	}
}

package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/memnode/memnode/importer"
)

func genBytes(t *testing.T, n int, seed uint64) ([]byte, scaleManifest) {
	t.Helper()
	var buf bytes.Buffer
	w := importer.NewWriter(&buf)
	man, err := genDataset(w, n, seed, nil)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), man
}

// TestScaleGenDeterministic: the same size and seed give the same bytes (the cache is keyed
// by the generator's version only), another seed other bytes.
func TestScaleGenDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates three datasets of 3,000 records; make test runs it")
	}
	a, ma := genBytes(t, 3000, scaleSeed)
	b, _ := genBytes(t, 3000, scaleSeed)
	c, _ := genBytes(t, 3000, scaleSeed+1)
	if sha256.Sum256(a) != sha256.Sum256(b) {
		t.Fatal("two runs with one seed wrote different datasets")
	}
	if bytes.Equal(a, c) {
		t.Fatal("another seed wrote the same dataset")
	}
	if ma.Anchor == "" || len(ma.Forget) != 10 || slices.Contains(ma.Forget, ma.Anchor) {
		t.Fatalf("manifest anchor %q, forget %v: want an anchor and 10 other IDs", ma.Anchor, ma.Forget)
	}
}

// TestScaleGenShape reads a generated dataset back with the importer's reader (every line
// a valid record) and checks the shape the scale figures assume: 50 projects, the largest
// ~22% of the observations, varied tools and types, sessions with prompts and summaries,
// and the manifest's IDs among the largest project's observations.
func TestScaleGenShape(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates and reads back 20,000 records; make test runs it")
	}
	const n = 20000
	data, man := genBytes(t, n, scaleSeed)
	r := importer.NewReader(bytes.NewReader(data))
	kinds := map[string]int{}
	perProject := map[string]int{}
	tools, types := map[string]int{}, map[string]int{}
	ids := map[string]bool{}
	largest := map[string]bool{}
	sessions := map[string]bool{}
	var narrative int
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := rec.Validate(); err != nil {
			t.Fatal(err)
		}
		kinds[rec.Kind]++
		switch {
		case rec.Session != nil:
			sessions[rec.Session.ID] = true
		case rec.Observation != nil:
			o := rec.Observation
			if !sessions[o.SessionID] {
				t.Fatalf("observation %s before its session %s", o.ID, o.SessionID)
			}
			if ids[o.ID] {
				t.Fatalf("duplicate ID %s", o.ID)
			}
			ids[o.ID] = true
			perProject[o.Project]++
			tools[o.ToolName]++
			types[o.Type]++
			narrative += len(o.Narrative)
			if o.Project == man.Largest {
				largest[o.ID] = true
			}
			if o.CreatedAt >= scaleEnd.UnixMilli() || o.HLC>>16 != uint64(o.CreatedAt) {
				t.Fatalf("observation %s: created %d, hlc %d: want before the fixed end, stamped at its time", o.ID, o.CreatedAt, o.HLC)
			}
		}
	}
	if kinds[importer.KindObservation] != n || man.Observations != n {
		t.Fatalf("%d observations (manifest %d), want %d", kinds[importer.KindObservation], man.Observations, n)
	}
	if got := kinds[importer.KindSession] + kinds[importer.KindPrompt] + kinds[importer.KindObservation] + kinds[importer.KindSummary]; got != man.Records {
		t.Fatalf("manifest counts %d records, the file has %d", man.Records, got)
	}
	if len(perProject) != scaleProjects {
		t.Fatalf("%d projects, want %d", len(perProject), scaleProjects)
	}
	if share := float64(perProject[man.Largest]) / n; share < 0.2 || share > 0.25 || perProject[man.Largest] != man.LargestObs {
		t.Fatalf("largest project %s holds %d (%.0f%%), manifest %d: want ~22%%", man.Largest, perProject[man.Largest], 100*share, man.LargestObs)
	}
	if kinds[importer.KindSummary] != kinds[importer.KindSession] || kinds[importer.KindPrompt] < kinds[importer.KindSession] {
		t.Fatalf("kinds %v: want a summary per session and at least a prompt each", kinds)
	}
	if per := n / kinds[importer.KindSession]; per < 15 || per > 35 {
		t.Fatalf("%d observations per session, want ~25", per)
	}
	if len(tools) < 8 || len(types) < 5 {
		t.Fatalf("tools %v, types %v: want variety", tools, types)
	}
	if avg := narrative / n; avg < 150 || avg > 800 {
		t.Fatalf("narrative %d characters on average, want a few sentences", avg)
	}
	for _, id := range append([]string{man.Anchor}, man.Forget...) {
		if !largest[id] {
			t.Fatalf("manifest ID %s is not an observation of %s", id, man.Largest)
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("10k, 100K,1m,2500")
	if err != nil || !slices.Equal(got, []int{10_000, 100_000, 1_000_000, 2500}) {
		t.Fatalf("parseSizes = %v, %v", got, err)
	}
	for _, bad := range []string{"", "k", "-5", "1g"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q) accepted", bad)
		}
	}
	if sizeName(1_000_000) != "1m" || sizeName(100_000) != "100k" {
		t.Fatal("sizeName")
	}
}

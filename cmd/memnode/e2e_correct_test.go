package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
)

// correctFixture is a started node with a project directory and three notes in it.
type correctFixture struct {
	in    *instance
	c     *client.Client
	proj  string // the project's directory (its base name is the project)
	notes []apitype.SaveResult
	texts []string
}

func newCorrectFixture(t *testing.T, texts ...string) *correctFixture {
	t.Helper()
	in := newInstance(t)
	in.start()
	c, err := client.FromDataDir(in.dataDir, in.port)
	if err != nil {
		t.Fatal(err)
	}
	f := &correctFixture{in: in, c: c, proj: filepath.Join(t.TempDir(), "truthproj"), texts: texts}
	if err := os.MkdirAll(f.proj, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, text := range texts {
		res, err := c.SaveNote(context.Background(), apitype.Note{Project: "truthproj", Text: text, Type: "decision"})
		if err != nil {
			t.Fatal(err)
		}
		f.notes = append(f.notes, res)
	}
	return f
}

// TestCorrectAndSupersedeThroughCLIAndHTTP: `memnode correct` and `memnode supersede`
// against a real node, and POST /api/correct and /api/supersede: the replaced record
// leaves the next session-start context and default search, the correction is there, and
// get and timeline still show the old record with "superseded by"; bad input is one
// stderr line and exit 1.
func TestCorrectAndSupersedeThroughCLIAndHTTP(t *testing.T) {
	f := newCorrectFixture(t,
		"The flaky login test is caused by the cache TTL",
		"Deploys go through the staging bucket gamma",
		"Deploys go through the release bucket delta",
		"The retry budget is three attempts",
	)
	in, ctx := f.in, context.Background()
	wrong, oldDeploy, newDeploy, doomed := f.notes[0].ID, f.notes[1].ID, f.notes[2].ID, f.notes[3].ID

	before := contextFor(t, in, f.proj)
	if !strings.Contains(before, "cache TTL") {
		t.Fatalf("the context lacks the note before any correction:\n%s", before)
	}

	// CLI: correct by short ID.
	short := f.short(t, wrong)
	out := in.mustRun(nil, "correct", short, "The flaky login test is a race in the session store, not the cache TTL")
	if !strings.Contains(out, "corrects "+short) {
		t.Fatalf("correct: %s", out)
	}
	// HTTP: supersede one note by another.
	res, err := f.c.Supersede(ctx, apitype.Supersede{Old: oldDeploy, New: newDeploy})
	if err != nil || res.Old != oldDeploy || res.New != newDeploy || res.OldShort == "" {
		t.Fatalf("supersede over HTTP: %+v %v", res, err)
	}

	after := contextFor(t, in, f.proj)
	for _, gone := range []string{"caused by the cache TTL", "staging bucket gamma"} {
		if strings.Contains(after, gone) {
			t.Errorf("the next session's context still shows the replaced record %q:\n%s", gone, after)
		}
	}
	for _, kept := range []string{"race in the session store", "release bucket delta", "retry budget"} {
		if !strings.Contains(after, kept) {
			t.Errorf("the next session's context lacks %q:\n%s", kept, after)
		}
	}

	// Default search leaves the replaced records out; the correction is found.
	hits, err := f.c.Search(ctx, apitype.SearchQuery{Text: "flaky login", Project: "truthproj"})
	if err != nil {
		t.Fatal(err)
	}
	var corr string
	for _, h := range hits.Hits {
		if h.ID == wrong {
			t.Errorf("search still shows the corrected record: %+v", h)
		}
		if h.Type == "correction" {
			corr = h.ID
			if len(h.Corrects) != 1 || h.Corrects[0] != short {
				t.Errorf("the correction's hit does not name what it corrects: %+v", h)
			}
		}
	}
	if corr == "" {
		t.Fatalf("search does not find the correction: %+v", hits.Hits)
	}

	// get and timeline still reach the old record, with the link both ways.
	corrShort := f.short(t, corr)
	got := in.mustRun(nil, "get", wrong, corr)
	if !strings.Contains(got, "cache TTL") || !strings.Contains(got, "superseded by: "+corrShort) || !strings.Contains(got, "corrects: "+short) {
		t.Errorf("get does not show the link:\n%s", got)
	}
	tl := in.mustRun(nil, "timeline", oldDeploy, "--project", "truthproj")
	if !strings.Contains(tl, "staging bucket gamma") || !strings.Contains(tl, "(superseded by "+res.NewShort+")") {
		t.Errorf("timeline does not show the superseded record with its link:\n%s", tl)
	}

	// Bad input: one line on stderr, exit 1.
	if _, err := f.c.Forget(ctx, []string{doomed}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown ID", []string{"correct", "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "x"}, "no observation"},
		{"unknown short ID", []string{"supersede", "zzzzzz", newDeploy}, "no observation"},
		{"by itself", []string{"supersede", newDeploy, newDeploy}, "cannot supersede itself"},
		{"forgotten", []string{"correct", doomed, "the budget is five"}, "no observation"},
		{"forgotten replacement", []string{"supersede", newDeploy, doomed}, "no observation"},
		{"replacement superseded", []string{"supersede", newDeploy, oldDeploy}, "itself superseded"},
	} {
		r := in.run(nil, bad.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 1 || len(lines) != 1 || !strings.Contains(r.stderr, bad.want) {
			t.Errorf("%s: exit %d, stderr %q (want exit 1, one line with %q)", bad.name, r.code, r.stderr, bad.want)
		}
	}
	// The same over HTTP: 404 for a record that is not there, 400 for a self-supersede.
	for _, c := range []struct {
		route, body string
		status      int
	}{
		{"/api/correct", fmt.Sprintf(`{"id":%q,"text":"x"}`, doomed), http.StatusNotFound},
		{"/api/supersede", fmt.Sprintf(`{"old":%q,"new":%q}`, newDeploy, newDeploy), http.StatusBadRequest},
		{"/api/correct", fmt.Sprintf(`{"id":%q,"text":"<private>only private</private>"}`, newDeploy), http.StatusBadRequest},
		{"/api/correct", `{"id":`, http.StatusBadRequest},
	} {
		if got := f.post(t, c.route, c.body); got != c.status {
			t.Errorf("POST %s %s: %d, want %d", c.route, c.body, got, c.status)
		}
	}
}

func (f *correctFixture) short(t *testing.T, id string) string {
	t.Helper()
	hits, err := f.c.Timeline(context.Background(), apitype.TimelineQuery{Anchor: id, Before: 0, After: 0})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits.Items {
		if h.ID == id && h.Short != "" {
			return h.Short
		}
	}
	t.Fatalf("no short ID for %s in %+v", id, hits.Items)
	return ""
}

// post sends body to route with the node's token and returns the status.
func (f *correctFixture) post(t *testing.T, route, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", f.in.port, route), bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.in.token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

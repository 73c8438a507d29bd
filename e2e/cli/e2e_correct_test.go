package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/internal/testkit"
)

// correctFixture is a started node with a project directory and three notes in it.
type correctFixture struct {
	in    *e2ekit.Instance
	c     *client.Client
	proj  string // the project's directory (its base name is the project)
	notes []apitype.SaveResult
	texts []string
}

func newCorrectFixture(t *testing.T, texts ...string) *correctFixture {
	t.Helper()
	in := e2ekit.NewInstance(t)
	in.Start()
	c, err := client.FromDataDir(in.DataDir, in.Port)
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
	t.Parallel()
	f := newCorrectFixture(t,
		"The flaky login test is caused by the cache TTL",
		"Deploys go through the staging bucket gamma",
		"Deploys go through the release bucket delta",
		"The retry budget is three attempts",
	)
	in, ctx := f.in, context.Background()
	wrong, oldDeploy, newDeploy, doomed := f.notes[0].ID, f.notes[1].ID, f.notes[2].ID, f.notes[3].ID

	before := e2ekit.ContextFor(t, in, f.proj)
	if !strings.Contains(before, "cache TTL") {
		t.Fatalf("the context lacks the note before any correction:\n%s", before)
	}

	// CLI: correct by short ID.
	short := f.short(t, wrong)
	out := in.MustRun(nil, "correct", short, "The flaky login test is a race in the session store, not the cache TTL")
	if !strings.Contains(out, "corrects "+short) {
		t.Fatalf("correct: %s", out)
	}
	// HTTP: supersede one note by another.
	res, err := f.c.Supersede(ctx, apitype.Supersede{Old: oldDeploy, New: newDeploy})
	if err != nil || res.Old != oldDeploy || res.New != newDeploy || res.OldShort == "" {
		t.Fatalf("supersede over HTTP: %+v %v", res, err)
	}

	after := e2ekit.ContextFor(t, in, f.proj)
	for _, gone := range []string{"caused by the cache TTL", "staging bucket gamma"} {
		if strings.Contains(after, gone) {
			t.Errorf("the next session's context still shows the replaced record %q:\n%s", gone, after)
		}
	}
	for _, kept := range []string{"✏️ The flaky login test is a race in the session store", "release bucket delta", "retry budget"} {
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
	got := in.MustRun(nil, "get", wrong, corr)
	if !strings.Contains(got, "cache TTL") || !strings.Contains(got, "superseded by: "+corrShort) || !strings.Contains(got, "corrects: "+short) {
		t.Errorf("get does not show the link:\n%s", got)
	}
	tl := in.MustRun(nil, "timeline", oldDeploy, "--project", "truthproj")
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
		r := in.Run(nil, bad.args...)
		lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
		if r.Code != 1 || len(lines) != 1 || !strings.Contains(r.Stderr, bad.want) {
			t.Errorf("%s: exit %d, stderr %q (want exit 1, one line with %q)", bad.name, r.Code, r.Stderr, bad.want)
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

	// An export carries the corrections: imported into a fresh node, the replaced records
	// stay out of its context too.
	dump := filepath.Join(t.TempDir(), "truth.jsonl")
	in.MustRun(nil, "export", "--out", dump)
	fresh := e2ekit.NewInstance(t)
	fresh.Start()
	if out := fresh.MustRun(nil, "import", dump); !strings.Contains(out, "2 corrections") {
		t.Errorf("import: %s", out)
	}
	imported := e2ekit.ContextFor(t, fresh, f.proj)
	if strings.Contains(imported, "caused by the cache TTL") || !strings.Contains(imported, "race in the session store") {
		t.Errorf("the imported node's context:\n%s", imported)
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
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", f.in.Port, route), bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.in.Token())
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestCorrectMemoryThroughMCP: the real `memnode mcp` over stdio lists correct_memory and
// runs it both ways (text, replaced_by) against a real node; the next session-start
// context shows the corrections, not the replaced records; an unknown ID is a tool error.
func TestCorrectMemoryThroughMCP(t *testing.T) {
	t.Parallel()
	f := newCorrectFixture(t,
		"The billing job runs hourly",
		"Use the v1 export endpoint",
		"Use the v2 export endpoint, v1 is gone",
	)
	in := f.in
	hourly, v1, v2 := f.notes[0].ID, f.notes[1].ID, f.notes[2].ID
	call := func(id string, args map[string]string) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call",
			"params": map[string]any{"name": "correct_memory", "arguments": args}})
		return string(b)
	}
	lines := []string{
		`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`,
		call("text", map[string]string{"id": f.short(t, hourly), "text": "The billing job runs every 15 minutes since the queue move"}),
		call("by", map[string]string{"id": v1, "replaced_by": v2}),
		call("unknown", map[string]string{"id": "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "text": "x"}),
		call("both", map[string]string{"id": v2, "text": "x", "replaced_by": hourly}),
	}
	r := in.Run([]byte(strings.Join(lines, "\n")+"\n"), "mcp")
	if r.Code != 0 {
		t.Fatalf("memnode mcp: exit %d, stderr %s", r.Code, r.Stderr)
	}
	replies := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var m struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		replies[m.ID] = l
	}
	if !strings.Contains(replies["list"], `"name":"correct_memory"`) || !strings.Contains(replies["list"], "wrong or outdated") {
		t.Errorf("tools/list lacks correct_memory: %.600s", replies["list"])
	}
	for _, id := range []string{"text", "by"} {
		if !strings.Contains(replies[id], "is now superseded by") || strings.Contains(replies[id], `"isError":true`) {
			t.Errorf("correct_memory (%s): %s", id, replies[id])
		}
	}
	for _, id := range []string{"unknown", "both"} {
		if !strings.Contains(replies[id], `"isError":true`) {
			t.Errorf("correct_memory (%s) should be a tool error: %s", id, replies[id])
		}
	}
	ctx := e2ekit.ContextFor(t, in, f.proj)
	for _, gone := range []string{"runs hourly", "v1 export endpoint"} {
		if strings.Contains(ctx, gone) {
			t.Errorf("the next session's context still shows %q:\n%s", gone, ctx)
		}
	}
	for _, kept := range []string{"every 15 minutes", "v2 export endpoint"} {
		if !strings.Contains(ctx, kept) {
			t.Errorf("the next session's context lacks %q:\n%s", kept, ctx)
		}
	}
}

// TestCorrectionReachesAPairedDevice: two real nodes paired over libp2p; a record written
// on A is corrected on B with `memnode correct`; A's next session-start context shows the
// correction and not the record, and A's `memnode get` shows the link.
func TestCorrectionReachesAPairedDevice(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("two-node sync test skipped in -short")
	}
	ports := e2ekit.SyncPorts{}
	a, b := e2ekit.NewSyncNode(t, "dev-a", ports), e2ekit.NewSyncNode(t, "dev-b", ports)
	for _, n := range []*e2ekit.SyncNode{a, b} {
		n.StartSync(t)
		n.Origin = n.Peers().Devices[0].PeerID
	}
	if out := b.MustRun(nil, "peers", "join", a.Invite("2m")); !strings.Contains(out, "Joined") {
		t.Fatalf("join: %s", out)
	}
	const word = "wombatcorrectword"
	a.Write(word)
	var id string
	e2ekit.Poll(t, "B to hold A's record", 60*time.Second, func() bool {
		hits := b.Find(true, word)
		if len(hits) > 0 {
			id = hits[0].ID
		}
		return id != ""
	})
	if !strings.Contains(e2ekit.ContextFor(t, a.Instance, a.Proj), word) {
		t.Fatalf("A's context lacks its own record before the correction")
	}
	const truth = "the lookup lives in the registry package now"
	if out := b.MustRun(nil, "correct", id, truth); !strings.Contains(out, "corrects") {
		t.Fatalf("correct on B: %s", out)
	}
	e2ekit.Poll(t, "A's context to show B's correction", 60*time.Second, func() bool {
		ctx := e2ekit.ContextFor(t, a.Instance, a.Proj)
		return strings.Contains(ctx, truth) && !strings.Contains(ctx, word)
	})
	if got := a.MustRun(nil, "get", id); !strings.Contains(got, "superseded by: ") {
		t.Fatalf("A's get of the corrected record lacks the link:\n%s", got)
	}
	if hits := a.Find(true, word); len(hits) != 0 {
		t.Fatalf("A's search still shows the corrected record: %+v", hits)
	}
}

// TestCorrectionReachesATeamMember: two real nodes in a team on a real rqlite cluster
// share a project; alice corrects her own record with `memnode correct`; bob's next
// session-start context shows the correction and not the record it replaces.
func TestCorrectionReachesATeamMember(t *testing.T) {
	t.Parallel()
	_, proj, a, b := e2ekit.TeamOfTwo(t, "billing-api", nil)
	const word = "platypusLedgerRounding"
	a.Write(t, word)
	var id string
	testkit.WaitFor(t, "alice's record on bob", 30*time.Second, func() bool {
		var res apitype.Results
		if err := json.Unmarshal([]byte(b.MustRun(nil, "search", word, "--json")), &res); err != nil || len(res.Hits) == 0 {
			return false
		}
		id = res.Hits[0].ID
		return true
	})
	// Only a record's author (or an admin) may correct it for the team (team/DESIGN.md,
	// trust model): alice corrects her own record, and bob's device follows.
	const truth = "ledger rounding moved to the invoice total"
	if out := a.MustRun(nil, "correct", id, truth); !strings.Contains(out, "corrects") {
		t.Fatalf("correct on alice: %s", out)
	}
	testkit.WaitFor(t, "bob's context to show alice's correction", 30*time.Second, func() bool {
		ctx := e2ekit.ContextFor(t, b.Instance, proj)
		return strings.Contains(ctx, truth) && !strings.Contains(ctx, word)
	})
	if got := b.MustRun(nil, "get", id); !strings.Contains(got, "superseded by: ") {
		t.Fatalf("bob's get of the corrected record lacks the link:\n%s", got)
	}
}

// TestViewerCorrectsACard: in a real Chromium, a feed card's "Correct…" asks what is true
// and saves it; the card is marked superseded, the node's next session-start context shows
// the correction and not the record, and after a reload the feed shows the correction
// (naming what it corrects) and no longer the replaced record.
func TestViewerCorrectsACard(t *testing.T) {
	t.Parallel()
	b, in, c := e2ekit.StartViewerNode(t)
	proj := filepath.Join(t.TempDir(), "viewerproj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	saved, err := c.SaveNote(context.Background(), apitype.Note{Project: "viewerproj", Text: "The nightly backup runs at koalamidnight", Type: "decision"})
	if err != nil {
		t.Fatal(err)
	}
	e2ekit.LoginViewer(t, b, in, 1)
	b.Press("j") // select the card; e is "Correct…"
	b.Press("e")
	b.WaitJS("the correction dialog", `!!document.querySelector('dialog[open] #c-text')`, 10*time.Second)
	const truth = "The nightly backup runs at two in the morning since the move"
	b.Do("type the correction", chromedp.SendKeys(chromedp.ID("c-text"), truth), chromedp.Click(chromedp.CSS(`dialog[open] button[data-correct]`)))
	b.WaitJS("the card marked superseded", e2ekit.CardWith("koalamidnight")+`?.classList.contains('superseded') && `+e2ekit.CardWith("koalamidnight")+`.querySelector('.links')?.textContent.includes('superseded by')`, 10*time.Second)
	b.Shot("correct-card")

	ctx := e2ekit.ContextFor(t, in, proj)
	if !strings.Contains(ctx, "two in the morning") || strings.Contains(ctx, "koalamidnight") {
		t.Fatalf("the next session's context after a viewer correction:\n%s", ctx)
	}
	got, err := c.Get(context.Background(), []string{saved.ID})
	if err != nil || len(got.Items) != 1 || len(got.Items[0].SupersededBy) != 1 {
		t.Fatalf("get of the corrected record: %+v %v", got, err)
	}
	b.Do("reload", chromedp.Reload())
	b.WaitJS("the feed with the correction only", `document.body.dataset.ready === 'true' && document.querySelectorAll('#feed .card').length === 1 && `+
		e2ekit.CardWith("two in the morning")+`?.querySelector('.links')?.textContent.includes('corrects')`, 15*time.Second)
}

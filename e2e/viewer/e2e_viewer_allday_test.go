package viewer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// runNode starts `memnode run` (the foreground node) on in and stops it at cleanup.
func runNode(t *testing.T, in *e2ekit.Instance) {
	t.Helper()
	sc, _ := e2ekit.StartRun(t, in)
	go func() { // keep the pipe drained until the node exits
		for sc.Scan() {
		}
	}()
	e2ekit.Poll(t, "memnode run to answer", 30*time.Second, func() bool { return in.Run(nil, "status").Code == 0 })
}

// writeCodexSession writes an export file: one Codex session of three observations that
// name files, words and types the search filters tell apart, and 15 more.
func writeCodexSession(t *testing.T, path string, at int64) {
	t.Helper()
	recs := []importer.Record{
		{Kind: importer.KindHeader, Header: &importer.Header{Format: "memnode-export", Version: 1, ExportedAt: at}},
		{Kind: importer.KindSession, Session: &memory.Session{ID: "codex-session", Project: "billing-api", Platform: "codex", StartedAt: at, Status: "completed", Origin: "laptop-origin", HLC: uint64(at) << 16}},
	}
	for i, o := range []struct{ typ, title, file string }{
		{"bugfix", "Invoice rounding drifted by a cent", "billing/round.go"},
		{"decision", "Invoice totals are computed in integer cents", "billing/money.go"},
		{"discovery", "Refunds reuse the invoice rounding helper", "billing/refund.go"},
	} {
		ts := at + int64(i)*1000
		ob := &memory.Observation{ID: store.ImportID(ts, fmt.Sprintf("codex:%d", i)), SessionID: "codex-session", Project: "billing-api",
			Type: o.typ, Title: o.title, Subtitle: "found while reading " + o.file, Narrative: "The invoice code in " + o.file + " was read and the invoice totals checked.",
			Facts: []string{"invoice totals in cents"}, FilesRead: []string{o.file}, CreatedAt: ts, Origin: "laptop-origin", HLC: uint64(ts) << 16}
		ob.ContentHash = ob.HashContent()
		recs = append(recs, importer.Record{Kind: importer.KindObservation, Observation: ob})
	}
	// More records than a page of search holds.
	for i := range 15 {
		ts := at - 3*24*3600*1000 + int64(i)*1000 // older than the rest: the feed's top stays varied
		ob := &memory.Observation{ID: store.ImportID(ts, fmt.Sprintf("codex:more:%d", i)), SessionID: "codex-session", Project: "billing-api",
			Type: "change", Title: fmt.Sprintf("Ledger step %d moved to the batch job", i), Subtitle: "batch/ledger.go",
			FilesModified: []string{"batch/ledger.go"}, CreatedAt: ts, Origin: "laptop-origin", HLC: uint64(ts) << 16}
		ob.ContentHash = ob.HashContent()
		recs = append(recs, importer.Record{Kind: importer.KindObservation, Observation: ob})
	}
	e2ekit.WriteExport(t, path, recs)
}

// cliIDs runs `memnode search --json args…` and returns the hits' IDs.
func cliIDs(t *testing.T, in *e2ekit.Instance, args ...string) []string {
	t.Helper()
	var res apitype.Results
	out := in.MustRun(nil, append([]string{"search", "--json"}, args...)...)
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("search --json %v: %v\n%s", args, err, out)
	}
	ids := []string{}
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// TestViewerAllDay uses the viewer as a person who keeps it open all day would, in one
// real Chromium against one real `memnode run`: the empty feed's first-run help (no agent
// hooked up, claude-mem's history offered); the imported history as compact cards (type
// icon, chips, short IDs as the CLI prints them, claude-mem's origin named whole, summaries
// as labelled sections, actions in a menu); the nav lit for the page a record was opened
// from; search with each of the CLI's filters returning what the CLI returns, with paging,
// a marked snippet and the ranking named; the Logs page under run.
func TestViewerAllDay(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("browser test skipped in -short")
	}
	b := e2ekit.NewBrowser(t)
	b.Do("a 1280×800 viewport", chromedp.EmulateViewport(1280, 800))
	in := e2ekit.NewInstance(t)
	// HOME is the data dir: claude-mem's database sits where claude-mem keeps it.
	cmDir := filepath.Join(in.DataDir, ".claude-mem")
	if err := os.MkdirAll(cmDir, 0o700); err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile("../../testdata/fixtures/claude-mem/claude-mem-13.25.3-sample.db")
	if err != nil {
		t.Fatal(err)
	}
	cmDB := filepath.Join(cmDir, "claude-mem.db")
	if err := os.WriteFile(cmDB, fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	runNode(t, in)
	base := fmt.Sprintf("http://127.0.0.1:%d/", in.Port)
	go2 := func(hash string) { b.Do("open "+hash, chromedp.Navigate(base+hash)) }

	t.Run("first run", func(t *testing.T) {
		b.T = t
		e2ekit.LoginViewer(t, b, in, 0)
		b.WaitJS("the first-run help", `document.getElementById('first-run')?.textContent.includes('memnode install')`, 10*time.Second)
		if txt := e2ekit.Eval[string](b, `document.getElementById('first-run').textContent`); !strings.Contains(txt, "No coding agent is hooked up") ||
			!strings.Contains(txt, "memnode import --from-claude-mem "+cmDB) {
			t.Errorf("first-run help says %q", txt)
		}
		b.Shot("feed-empty")
	})

	out := in.MustRun(nil, "import", "--from-claude-mem", cmDB)
	codex := filepath.Join(t.TempDir(), "codex.jsonl")
	writeCodexSession(t, codex, time.Date(2026, 10, 3, 12, 0, 0, 0, time.UTC).UnixMilli())
	out += in.MustRun(nil, "import", codex)
	t.Logf("imports: %s", strings.TrimSpace(out))

	t.Run("cards", func(t *testing.T) {
		b.T = t
		b.WaitJS("the imported records, live", `document.querySelectorAll('#feed .card').length >= 20 && document.getElementById('feed-empty').hidden`, 15*time.Second)
		// The filters fit one row at 1280 px.
		if h := e2ekit.Eval[float64](b, `document.querySelector('#main > .filters').getBoundingClientRect().height`); h > 50 {
			t.Errorf("the feed's filters take %v px (more than one row at 1280 px)", h)
		}
		// claude-mem's origin is named whole, never cut to its last characters.
		labels := e2ekit.Eval[string](b, `[...document.querySelectorAll('#feed .card .chip')].map((c) => c.textContent).join('|')`)
		if strings.Contains(labels, "aude-mem") && !strings.Contains(labels, "claude-mem") || !strings.Contains(labels, "claude-mem import") {
			t.Errorf("origin chips: %s", labels)
		}
		for _, l := range strings.Split(labels, "|") {
			if strings.HasPrefix(l, "aude") || strings.HasSuffix(l, "…") {
				t.Errorf("an origin cut mid-word: %q", l)
			}
		}
		// The short ID on a card is the CLI's.
		var res apitype.Results
		if err := json.Unmarshal([]byte(in.MustRun(nil, "search", "--json", "VAT applied twice")), &res); err != nil || len(res.Hits) == 0 {
			t.Fatalf("search: %v %+v", err, res)
		}
		h := res.Hits[0]
		if got := e2ekit.Eval[string](b, fmt.Sprintf(`document.querySelector('#feed .card[data-id=%q] .short')?.textContent`, h.ID)); got != "#"+h.Short {
			t.Errorf("card shows %q, the CLI %q", got, h.Short)
		}
		// No action is a loud button on a card: they are in the menu.
		if n := e2ekit.Eval[float64](b, `document.querySelectorAll('#feed .card button.danger, #feed .card .actions').length`); n != 0 {
			t.Errorf("%v loud action buttons on the cards", n)
		}
		b.Do("open a card's menu", chromedp.Click(chromedp.CSS(`#feed .card [data-act=menu]`)))
		b.WaitJS("the menu", `document.querySelector('.menu [data-act=copy]') && document.activeElement.closest('.menu')`, 5*time.Second)
		b.Shot("card-menu")
		b.Do("close the menu", chromedp.KeyEvent("\x1b"))
		b.WaitJS("the menu to close", `!document.querySelector('.menu')`, 5*time.Second)
		// A summary opens into labelled sections.
		sum := `document.querySelector('#feed .card.t-summary')`
		b.Do("expand a summary", chromedp.Click(chromedp.CSS(`#feed .card.t-summary [data-act=expand]`)))
		b.WaitJS("its sections", sum+`.querySelector('.sec.s-learned h4')`, 5*time.Second)
		heads := e2ekit.Eval[string](b, `[...`+sum+`.querySelectorAll('.sec h4')].map((h) => h.textContent).join(',')`)
		for _, want := range []string{"Request", "Investigated", "Learned", "Completed", "Next steps"} {
			if !strings.Contains(heads, want) {
				t.Errorf("summary sections %q lack %q", heads, want)
			}
		}
		b.Shot("feed")
		// A record opened from the feed keeps Feed lit in the nav.
		id := e2ekit.Eval[string](b, sum+`.dataset.id`)
		b.Do("open the summary", chromedp.Click(chromedp.CSS(`#feed .card.t-summary .title a`)))
		b.WaitJS("the record page, Feed lit", fmt.Sprintf(`document.querySelector('#record')?.textContent.includes(%q) && document.querySelector('nav a[aria-current=page]')?.dataset.page === 'feed'`, id), 10*time.Second)
		b.Shot("record")
	})

	t.Run("search like the CLI", func(t *testing.T) {
		b.T = t
		go2("#/search")
		b.WaitJS("the search page with its choices", `document.getElementById('s-platform')?.options.length > 1`, 10*time.Second)
		// Each filter alone (and one with a date range), compared with the CLI's answer.
		cases := []struct {
			name  string
			set   map[string]string
			query string
			cli   []string
		}{
			{"text", nil, "invoice", []string{"invoice"}},
			{"platform", map[string]string{"s-platform": "codex"}, "invoice", []string{"invoice", "--platform", "codex"}},
			{"file", map[string]string{"s-file": "monthly.go"}, "", []string{"--file", "monthly.go"}},
			{"since/until", map[string]string{"s-since": "2026-10-02", "s-until": "2026-10-03"}, "", []string{"--since", "2026-10-02", "--until", "2026-10-03"}},
			{"observation type", map[string]string{"s-type": "obs:bugfix"}, "invoice", []string{"invoice", "--type", "observations", "--obs-type", "bugfix"}},
			{"summaries", map[string]string{"s-type": "sessions"}, "", []string{"--type", "sessions"}},
			{"project", map[string]string{"s-project": "mobile-app"}, "", []string{"--project", "mobile-app"}},
		}
		for _, c := range cases {
			js := `(() => { for (const i of document.querySelectorAll('#main form input, #main form select')) i.value = i.tagName === 'SELECT' ? i.options[0].value : '';`
			for id, v := range c.set {
				js += fmt.Sprintf(`document.getElementById(%q).value = %q;`, id, v)
			}
			js += fmt.Sprintf(`document.getElementById('s-query').value = %q; document.querySelector('#results').textContent = ''; document.querySelector('#main form').requestSubmit(); return true; })()`, c.query)
			e2ekit.Eval[bool](b, js)
			b.WaitJS(c.name+" results", `document.getElementById('results-info')`, 10*time.Second)
			var got []string
			if err := json.Unmarshal([]byte(e2ekit.Eval[string](b, `JSON.stringify([...document.querySelectorAll('#results .hit')].map((h) => h.dataset.id))`)), &got); err != nil {
				t.Fatal(err)
			}
			want := cliIDs(t, in, append(c.cli, "--limit", "20")...)
			// Hits of equal score come in no set order: the same hits, compared as sets.
			slices.Sort(got)
			slices.Sort(want)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("%s: the viewer found %v, the CLI %v", c.name, got, want)
			}
		}
		// A text query: its words are marked in the snippets, and the ranking is named.
		e2ekit.Eval[bool](b, `(() => { for (const i of document.querySelectorAll('#main form input, #main form select')) i.value = i.tagName === 'SELECT' ? i.options[0].value : ''; document.getElementById('s-query').value = 'invoice rounding'; document.querySelector('#results').textContent = ''; document.querySelector('#main form').requestSubmit(); return true; })()`)
		b.WaitJS("marked snippets", `document.querySelector('#results .snippet mark')`, 10*time.Second)
		if info := e2ekit.Eval[string](b, `document.getElementById('results-info').textContent`); !strings.Contains(info, "ranked by fts") {
			t.Errorf("results say %q (want the ranking named)", info)
		}
		if m := e2ekit.Eval[string](b, `document.querySelector('#results .snippet mark').textContent.toLowerCase()`); m != "invoice" && m != "rounding" {
			t.Errorf("marked %q", m)
		}
		b.Shot("search")
		// Typing searches as you go: "invoi" finds the invoice records.
		e2ekit.Eval[bool](b, `(() => { const q = document.getElementById('s-query'); q.value = 'invoi'; document.querySelector('#results').textContent = ''; q.dispatchEvent(new Event('input')); return true; })()`)
		b.WaitJS("hits while typing", `[...document.querySelectorAll('#results .hit')].some((h) => h.textContent.includes('Invoice'))`, 10*time.Second)
		// Paging: the second page is the CLI's --offset 20.
		e2ekit.Eval[bool](b, `(() => { for (const i of document.querySelectorAll('#main form input, #main form select')) i.value = i.tagName === 'SELECT' ? i.options[0].value : ''; document.getElementById('s-order').value = 'newest'; document.getElementById('s-query').value = ''; document.querySelector('#results').textContent = ''; document.querySelector('#main form').requestSubmit(); return true; })()`)
		b.WaitJS("the first page", `document.querySelectorAll('#results .hit').length === 20`, 10*time.Second)
		b.Do("next page", chromedp.Click(chromedp.ID("s-next")))
		b.WaitJS("the second page", `document.getElementById('results-info')?.textContent.startsWith('Hits 21')`, 10*time.Second)
		var got []string
		if err := json.Unmarshal([]byte(e2ekit.Eval[string](b, `JSON.stringify([...document.querySelectorAll('#results .hit')].map((h) => h.dataset.id))`)), &got); err != nil {
			t.Fatal(err)
		}
		if want := cliIDs(t, in, "--order", "newest", "--limit", "20", "--offset", "20"); !slices.Equal(got, want) {
			t.Errorf("page 2: the viewer shows %v, the CLI %v", got, want)
		}
		// A record opened from search keeps Search lit.
		b.Do("open a hit", chromedp.Click(chromedp.CSS(`#results .hit a`)))
		b.WaitJS("the timeline, Search lit", `document.querySelector('#timeline') && document.querySelector('nav a[aria-current=page]')?.dataset.page === 'search'`, 10*time.Second)
		b.Shot("timeline")
	})

	t.Run("settings apply live, restart keeps the session", func(t *testing.T) {
		b.T = t
		go2("#/settings")
		b.WaitJS("the settings page", `document.getElementById('set-context_observations') && [...document.getElementById('preview-project').options].some((o) => o.value === 'billing-api')`, 10*time.Second)
		for _, g := range []string{"capture", "context", "ai", "search", "sync", "team", "viewer"} {
			if !e2ekit.Eval[bool](b, fmt.Sprintf(`!!document.querySelector('#group-%s .setting .help')`, g)) {
				t.Errorf("no %s group with described settings", g)
			}
		}
		if live := e2ekit.Eval[string](b, `document.querySelector('[data-name=context_observations] .tag').textContent + ' ' + document.querySelector('[data-name=workers] .tag').textContent`); live != "live restart" {
			t.Errorf("context_observations and workers are marked %q", live)
		}
		e2ekit.Eval[bool](b, `(() => { const p = document.getElementById('preview-project'); p.value = 'billing-api'; p.dispatchEvent(new Event('change')); return true; })()`)
		b.WaitJS("the preview", `document.getElementById('preview').dataset.renders > 0`, 10*time.Second)
		ledger := `(document.getElementById('preview').textContent.match(/Ledger step/g) || []).length`
		proj := filepath.Join(t.TempDir(), "billing-api")
		if before, inPage := strings.Count(e2ekit.ContextFor(t, in, proj), "Ledger step"), e2ekit.Eval[float64](b, ledger); before < 10 || inPage != float64(before) {
			t.Fatalf("before: %d ledger observations in the session-start context, %v in the preview", before, inPage)
		}
		pid := in.PidFile()
		b.Shot("settings")
		// Typing a live setting saves it; the preview is drawn again, and the next session
		// starts with it — no restart.
		b.Do("type a context bound", chromedp.SendKeys(chromedp.ID("set-context_observations"), "2"))
		b.WaitJS("the preview with 2 observations", ledger+` <= 2 && document.getElementById('settings-state').textContent.startsWith('Saved')`, 10*time.Second)
		if n := strings.Count(e2ekit.ContextFor(t, in, proj), "Ledger step"); n > 2 {
			t.Errorf("the next session-start context lists %d ledger observations after context_observations 2", n)
		}
		if e2ekit.Eval[bool](b, `!!document.getElementById('restart')`) || in.PidFile() != pid {
			t.Error("a live setting asked for a restart")
		}
		// A restart-only setting waits for the restart button; the restart keeps the page
		// logged in (its session is kept in the data dir) and applies the setting.
		b.Do("type workers", chromedp.SendKeys(chromedp.ID("set-workers"), "3"))
		b.WaitJS("the restart offer", `document.getElementById('restart-box').textContent.includes('workers') && document.getElementById('restart')`, 10*time.Second)
		b.Shot("settings-restart")
		b.Do("restart from the page", chromedp.Click(chromedp.ID("restart")))
		b.WaitJS("the node back, the page logged in", `document.body.dataset.restarted === '1' && document.getElementById('set-workers') && !document.getElementById('restart')`, 60*time.Second)
		b.WaitJS("the live stream again", `document.getElementById('live').classList.contains('on') && !document.querySelector('.login')`, 30*time.Second)
		e2ekit.Eval[bool](b, `(fetch('/api/viewer/settings').then((r) => r.json()).then((s) => { window.__workers = s.effective.workers; }), true)`)
		b.WaitJS("the node running 3 workers", `window.__workers === 3`, 10*time.Second)
		if log, _ := os.ReadFile(filepath.Join(in.DataDir, "logs", "memnode.log")); strings.Count(string(log), "node ready") < 2 {
			t.Errorf("the node did not start again:\n%s", e2ekit.Tail(string(log), 2000))
		}
	})

	t.Run("logs under run", func(t *testing.T) {
		b.T = t
		go2("#/logs")
		b.WaitJS("log lines", `document.querySelectorAll('#log .line').length > 3`, 10*time.Second)
		// Peer IDs are shortened; the component filter keeps one component's lines.
		if txt := e2ekit.Eval[string](b, `document.getElementById('log').textContent`); strings.Contains(txt, "12D3KooW") {
			t.Error("a full peer ID on the Logs page")
		}
		b.WaitJS("the sync component", `[...document.getElementById('log-component').options].some((o) => o.value === 'sync')`, 10*time.Second)
		e2ekit.Eval[bool](b, `(() => { const c = document.getElementById('log-component'); c.value = 'sync'; c.dispatchEvent(new Event('change')); return true; })()`)
		if n := e2ekit.Eval[float64](b, `[...document.querySelectorAll('#log .line')].filter((l) => l.querySelector('.comp')?.textContent !== 'sync').length`); n != 0 {
			t.Errorf("%v lines of other components under the sync filter", n)
		}
	})

	t.Run("every page light and dark, desktop and phone, accessible", func(t *testing.T) {
		b.T = t
		axe, err := os.ReadFile(agentcli.InstallFile(t, "axe-core", axeVersion, "axe.min.js"))
		if err != nil {
			t.Fatal(err)
		}
		var res apitype.Results
		if err := json.Unmarshal([]byte(in.MustRun(nil, "search", "--json", "Stripe webhook idempotent", "--type", "sessions")), &res); err != nil || len(res.Hits) == 0 {
			t.Fatalf("search: %v %+v", err, res)
		}
		id := res.Hits[0].ID
		pages := []struct{ name, hash, ready string }{
			{"feed", "#/feed", `document.querySelector('#feed .card')`},
			{"search", "#/search", `document.querySelector('#results .hit')`},
			{"record", "#/record/" + id, `document.querySelector('#record')`},
			{"timeline", "#/record/" + id + "/timeline", `document.querySelector('#timeline .hit')`},
			{"devices", "#/devices", `document.querySelector('#peers tbody tr')`},
			{"team", "#/team", `document.getElementById('team')?.textContent.length > 0`},
			{"settings", "#/settings", `document.getElementById('set-workers') && document.getElementById('keys-state').textContent`},
			{"logs", "#/logs", `document.querySelector('#log .line')`},
		}
		var serious []string
		for _, size := range []struct{ w, h int64 }{{1280, 800}, {390, 844}} {
			b.Do("viewport", chromedp.EmulateViewport(size.w, size.h))
			for _, theme := range []string{"light", "dark"} {
				for _, p := range pages {
					b.Do("open "+p.name, chromedp.Navigate(base+p.hash))
					e2ekit.Eval[bool](b, fmt.Sprintf(`(localStorage.setItem('memnode-theme', %q), document.documentElement.dataset.theme = %q, true)`, theme, theme))
					if p.name == "search" {
						b.WaitJS("the search box", `document.getElementById('s-query')`, 10*time.Second)
						e2ekit.Eval[bool](b, `(document.getElementById('s-query').value = 'invoice', document.querySelector('#main form').requestSubmit(), true)`)
					}
					b.WaitJS(p.name, `document.body.dataset.ready === 'true' && (`+p.ready+`)`, 15*time.Second)
					e2ekit.Eval[bool](b, `(document.activeElement?.blur(), true)`)
					b.Shot(fmt.Sprintf("%s-%s-%d", p.name, theme, size.w))
					if w := e2ekit.Eval[float64](b, `document.documentElement.scrollWidth`); w > float64(size.w) {
						t.Errorf("%s (%s, %d px) scrolls sideways: %v px wide; widest: %s", p.name, theme, size.w, w, e2ekit.Eval[string](b, fmt.Sprintf(
							`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > %d).slice(0, 6).map((e) => e.tagName + '.' + e.className + '#' + e.id + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')`, size.w+1)))
					}
					// axe-core in the page: no serious or critical violation, in either theme
					// (contrast differs), at either width.
					if !e2ekit.Eval[bool](b, `typeof axe !== 'undefined'`) {
						e2ekit.Eval[bool](b, string(axe)+";true")
					}
					e2ekit.Eval[bool](b, `(window.__axe = null, axe.run(document).then((r) => { window.__axe = JSON.stringify(r.passes.length ? r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id + ' (' + v.impact + '): ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')) : ['axe checked nothing']); }), true)`)
					b.WaitJS("axe", `window.__axe !== null`, 30*time.Second)
					var found []string
					if err := json.Unmarshal([]byte(e2ekit.Eval[string](b, `window.__axe`)), &found); err != nil {
						t.Fatal(err)
					}
					for _, v := range found {
						serious = append(serious, fmt.Sprintf("%s %s %d: %s", p.name, theme, size.w, v))
					}
				}
			}
		}
		if len(serious) > 0 {
			t.Errorf("axe-core %s found %d serious or critical violations:\n%s", axeVersion, len(serious), strings.Join(serious, "\n"))
		}
		// The README's screenshot is the light feed at 1280×800: MEMNODE_VIEWER_PNG=docs/viewer.png
		// regenerates it.
		if dst := os.Getenv("MEMNODE_VIEWER_PNG"); dst != "" {
			png, err := os.ReadFile(filepath.Join(b.Shots, "feed-light-1280.png"))
			if err == nil {
				err = os.WriteFile(dst, png, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// axeVersion is the axe-core release the accessibility pass runs (pinned; npm installs it
// once into the agent CLI cache).
const axeVersion = "4.14.1"

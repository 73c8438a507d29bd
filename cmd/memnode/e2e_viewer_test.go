package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// chromiumFlags are the flags every browser test runs Chromium with: headless, nothing
// fetched from the network, a fresh profile.
var chromiumFlags = []string{"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync"}

// chromium returns the browser to drive: Debian's /usr/bin/chromium (what .ci/run
// installs), or chromium on PATH. Missing, the test fails under MEMNODE_CI and skips
// otherwise.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("MEMNODE_CI") != "" {
		t.Fatal("chromium is not installed: .ci/run installs it (apt-get install -y chromium)")
	}
	t.Skip("browser test skipped: chromium not installed (apt-get install -y chromium)")
	return ""
}

// artifactDir is where the browser test writes its screenshots: $MEMNODE_ARTIFACTS/viewer,
// or a temp dir.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if a := os.Getenv("MEMNODE_ARTIFACTS"); a != "" {
		dir = filepath.Join(a, "viewer")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser drives one headless Chromium tab for the whole test; t is the (sub)test running.
type browser struct {
	t      *testing.T
	ctx    context.Context
	shots  string
	perfOn bool // the CDP Performance domain is on (in thread time)
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	return newBrowserWith(t, chromium(t), t.TempDir())
}

// newBrowserWith starts the browser at execPath with its profile in dir.
func newBrowserWith(t *testing.T, execPath, dir string) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(execPath), chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 800)}
	for _, f := range chromiumFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; it must not run under a timeout (see chromedp.Run).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx, shots: artifactDir(t)}
}

// do runs steps with a deadline, failing the test with what it was doing.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("browser: eval %s: %v", expr, err)
	}
	return v
}

// waitJS waits until expr is truthy in the page.
func (b *browser) waitJS(what, expr string, timeout time.Duration) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout+5*time.Second)
	defer cancel()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		_, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Until(deadline)), chromedp.WithPollingInterval(20*time.Millisecond)))
		// A navigation that lands while the poll starts destroys the page's JavaScript
		// context under it: poll again in the new one.
		if err == nil || !strings.Contains(err.Error(), "Cannot find context with specified id") || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.getElementById('main')?.innerText || document.body.innerText`))
		b.t.Fatalf("browser: waiting for %s: %v\npage: %.2000s", what, err, body)
	}
}

// shot saves a screenshot of the viewport as NAME.png in the artifact dir.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// startViewerNode is the setup of a one-node browser test: skipped in -short, a real
// Chromium, a started real node and a client of its API (to seed records before or after
// loginViewer).
func startViewerNode(t *testing.T) (*browser, *instance, *client.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short")
	}
	b := newBrowser(t)
	in := newInstance(t)
	in.start()
	c, err := client.FromDataDir(in.dataDir, in.port)
	if err != nil {
		t.Fatal(err)
	}
	return b, in, c
}

// loginViewer opens in's one-time viewer URL and waits for n feed cards.
func loginViewer(t *testing.T, b *browser, in *instance, n int) {
	t.Helper()
	url := strings.Fields(in.mustRun(nil, "viewer"))[0]
	b.do("open the one-time URL", chromedp.Navigate(url))
	b.waitJS(fmt.Sprintf("%d cards", n), fmt.Sprintf(`document.body.dataset.ready === 'true' && document.querySelectorAll('#feed .card').length === %d`, n), 15*time.Second)
}

// cardWith is a JS expression: the feed card whose text holds word (null when none).
func cardWith(word string) string {
	return fmt.Sprintf(`([...document.querySelectorAll('#feed .card')].find((c) => c.textContent.includes(%q)) || null)`, word)
}

// TestViewerInBrowser drives the web viewer in a real headless Chromium against real
// memnode processes: the one-time URL logs in; a hook event from a real `memnode hook`
// process appears in the feed without reload; a record from a paired node appears;
// forgetting it in the viewer removes it on both nodes; search → timeline → record; the
// devices page makes an invite a third node joins; settings are saved to settings.json
// and a bad value shows the node's validation error. Screenshots of every page go to the
// artifact dir.
func TestViewerInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test skipped in -short")
	}
	b := newBrowser(t)
	t.Logf("screenshots in %s", b.shots)
	ports := syncPorts{}
	a, peer := newSyncNode(t, "viewer-a", ports), newSyncNode(t, "viewer-b", ports)
	// The key store is the passphrase file: the test never touches a real keyring.
	a.extra = append(a.extra, "MEMNODE_KEYS_BACKEND=file", "MEMNODE_KEYS_PASSPHRASE=viewer test passphrase")
	defer func() {
		if t.Failed() {
			logs, _ := os.ReadFile(datadir.Dir(a.dataDir).NodeLog())
			t.Logf("---- viewer-a log:\n%s", tail(string(logs), 4000))
		}
	}()
	a.startSync(t)
	a.write("warmupword")
	token, err := datadir.Dir(a.dataDir).ReadToken()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("one-time URL logs in", func(t *testing.T) {
		b.t = t
		out := a.mustRun(nil, "viewer")
		url := strings.Fields(out)[0]
		if !strings.HasPrefix(url, fmt.Sprintf("http://127.0.0.1:%d/login?code=", a.port)) || strings.Contains(out, token) {
			t.Fatalf("memnode viewer printed %q", out)
		}
		b.do("open the one-time URL", chromedp.Navigate(url))
		b.waitJS("the feed", `document.body.dataset.ready === 'true' && document.querySelector('#feed .card')`, 10*time.Second)
		if got := eval[string](b, "location.href"); got != fmt.Sprintf("http://127.0.0.1:%d/#/feed", a.port) && got != fmt.Sprintf("http://127.0.0.1:%d/", a.port) {
			t.Errorf("after login the address bar shows %q (the code must be gone)", got)
		}
		// The session cookie is HttpOnly: the page sees only the CSRF cookie. No cookie,
		// page or script holds the token.
		cookies := eval[string](b, "document.cookie")
		if strings.Contains(cookies, "memnode_session_") || !strings.Contains(cookies, "memnode_csrf_") || strings.Contains(cookies, token) {
			t.Errorf("document.cookie = %q", cookies)
		}
		if html := eval[string](b, "document.documentElement.outerHTML"); strings.Contains(html, token) {
			t.Error("the page holds the token")
		}
		// The code was used up: a second browser visit is refused.
		b.do("reuse the code", chromedp.Navigate(url))
		if txt := eval[string](b, "document.body.innerText"); !strings.Contains(txt, "unknown, used or expired") {
			t.Fatalf("reused code: page says %q", txt)
		}
		b.do("back to the viewer", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/feed", a.port)))
		b.waitJS("the feed again (the session outlives the code)", `document.querySelector('#feed .card')`, 10*time.Second)
	})

	t.Run("hook event appears live", func(t *testing.T) {
		b.t = t
		b.waitJS("the live stream", `document.getElementById('live').classList.contains('on')`, 10*time.Second)
		a.write("livehookword")
		hookDone := time.Now()
		b.waitJS("the hook's observation in the feed", cardWith("livehookword"), 10*time.Second)
		took := time.Since(hookDone)
		t.Logf("hook event → card in the feed: %v", took.Round(time.Millisecond))
		if took > time.Second {
			t.Errorf("the hook's record took %v to appear (want ≤ 1 s)", took)
		}
		b.shot("feed")
	})

	var peerID string
	t.Run("record from a paired node appears", func(t *testing.T) {
		b.t = t
		peer.startSync(t)
		if out := peer.mustRun(nil, "peers", "join", a.invite("2m")); !strings.Contains(out, "Joined") {
			t.Fatalf("join: %s", out)
		}
		peer.write("pairedpeerword")
		b.waitJS("the paired node's record in the feed", cardWith("pairedpeerword"), 30*time.Second)
		peerID = eval[string](b, cardWith("pairedpeerword")+".dataset.id")
		if peerID == "" {
			t.Fatal("card without an ID")
		}
	})

	t.Run("forget in the viewer removes it on both nodes", func(t *testing.T) {
		b.t = t
		if peerID == "" {
			t.Skip("needs the paired record")
		}
		eval[bool](b, cardWith("pairedpeerword")+`.querySelector('[data-act=menu]').click() || true`)
		// The menu's Forget is a quiet item, never a loud button on the card.
		b.waitJS("the action menu", `document.querySelector('.menu [data-act=forget]')`, 5*time.Second)
		if n := eval[float64](b, `document.querySelectorAll('#feed .card button.danger').length`); n != 0 {
			t.Errorf("%v loud danger buttons on the feed's cards", n)
		}
		eval[bool](b, `document.querySelector('.menu [data-act=forget]').click() || true`)
		b.waitJS("the confirmation dialog", `document.querySelector('dialog[open] [data-confirm]')`, 5*time.Second)
		b.shot("forget-confirm")
		eval[bool](b, `document.querySelector('dialog[open] [data-confirm]').click() || true`)
		b.waitJS("the card to go", "!("+cardWith("pairedpeerword")+")", 10*time.Second)
		for _, n := range []*syncNode{a, peer} {
			poll(t, n.name+" to forget the record", 30*time.Second, func() bool {
				return len(n.find(true, "pairedpeerword")) == 0
			})
		}
	})

	t.Run("search → timeline → record", func(t *testing.T) {
		b.t = t
		base := fmt.Sprintf("http://127.0.0.1:%d/", a.port)
		b.do("open search", chromedp.Navigate(base+"#/search"), chromedp.WaitVisible(chromedp.ID("s-query")),
			chromedp.SendKeys(chromedp.ID("s-query"), "livehookword"), chromedp.Click(chromedp.CSS(`#main form button[type=submit]`)))
		b.waitJS("a hit", `document.querySelector('#results .hit a')`, 10*time.Second)
		b.shot("search")
		id := eval[string](b, `document.querySelector('#results .hit').dataset.id`)
		b.do("open the hit's timeline", chromedp.Click(chromedp.CSS(`#results .hit a`)))
		b.waitJS("the timeline", `document.querySelector('#timeline .hit.anchor a')`, 10*time.Second)
		b.shot("timeline")
		b.do("open the record", chromedp.Click(chromedp.CSS(`#timeline .hit.anchor a`)))
		b.waitJS("the record", fmt.Sprintf(`document.querySelector('#record') && document.querySelector('#record').textContent.includes(%q)`, id), 10*time.Second)
		if txt := eval[string](b, `document.querySelector('.card.full').textContent`); !strings.Contains(txt, "livehookword") {
			t.Fatalf("record page: %q", txt)
		}
		b.shot("record")
	})

	t.Run("devices page invites a third node", func(t *testing.T) {
		b.t = t
		third := newSyncNode(t, "viewer-c", ports)
		third.startSync(t)
		b.do("open devices", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/devices", a.port)))
		b.waitJS("the devices table", `document.querySelectorAll('#peers tbody tr').length >= 2`, 10*time.Second)
		b.do("create an invite", chromedp.Click(chromedp.ID("invite-create")))
		b.waitJS("the invite code", `document.getElementById('invite-code')`, 10*time.Second)
		line := eval[string](b, `document.getElementById('invite-code').textContent`)
		code, ok := strings.CutPrefix(line, "memnode peers join ")
		if !ok || !strings.HasPrefix(code, "MN1") {
			t.Fatalf("invite shown as %q", line)
		}
		if out := third.mustRun(nil, "peers", "join", code); !strings.Contains(out, "Joined") {
			t.Fatalf("third node's join: %s", out)
		}
		b.waitJS("three devices", `document.querySelectorAll('#peers tbody tr').length === 3 && document.getElementById('peers').textContent.includes('viewer-c')`, 30*time.Second)
		// The invite stays on screen while the table refreshes; blank it for the screenshot.
		eval[bool](b, `(document.getElementById('invite-code').textContent = 'memnode peers join MN1…') && true`)
		b.shot("devices")
	})

	t.Run("settings saved and validated", func(t *testing.T) {
		b.t = t
		b.do("open settings", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/settings", a.port)),
			chromedp.WaitVisible(chromedp.ID("set-workers")),
			chromedp.SetValue(chromedp.ID("set-workers"), "3"), chromedp.Click(chromedp.ID("settings-save")))
		path := datadir.Dir(a.dataDir).Settings()
		poll(t, "settings.json to hold workers 3", 10*time.Second, func() bool {
			var s map[string]any
			bs, err := os.ReadFile(path)
			return err == nil && json.Unmarshal(bs, &s) == nil && s["workers"] == float64(3)
		})
		b.shot("settings")
		before, _ := os.ReadFile(path)
		b.do("save a bad value", chromedp.SetValue(chromedp.ID("set-workers"), "0"), chromedp.Click(chromedp.ID("settings-save")))
		b.waitJS("the validation error", `document.getElementById('settings-error').textContent.includes('workers must be')`, 10*time.Second)
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Fatalf("a refused value changed settings.json:\n%s", after)
		}
		// A key entered here goes to the key store and is never shown back.
		const key = "sk-viewer-test-0123456789abcdefghij"
		b.do("store a key", chromedp.SetValue(chromedp.ID("key-provider"), "openai"), chromedp.SendKeys(chromedp.ID("key-value"), key), chromedp.Click(chromedp.ID("key-save")))
		b.waitJS("the stored key named", `document.getElementById('keys-state').textContent.includes('openai')`, 10*time.Second)
		if html := eval[string](b, "document.documentElement.outerHTML + [...document.querySelectorAll('input')].map((i) => i.value).join()"); strings.Contains(html, key) {
			t.Fatal("the page shows the stored key")
		}
		if out := a.mustRun(nil, "keys", "list"); !strings.Contains(out, "openai") {
			t.Fatalf("memnode keys list after the viewer stored one: %s", out)
		}
		b.waitJS("the preview's projects", `[...document.getElementById('preview-project').options].some((o) => o.value === 'syncproj')`, 10*time.Second)
		eval[bool](b, `(() => { const p = document.getElementById('preview-project'); p.value = 'syncproj'; p.dispatchEvent(new Event('change')); return true; })()`)
		b.waitJS("the context preview", `document.getElementById('preview').dataset.renders > 0`, 10*time.Second)
	})

	t.Run("logs and team pages", func(t *testing.T) {
		b.t = t
		b.do("open logs", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/logs", a.port)))
		b.waitJS("log lines", `document.getElementById('log')?.textContent.length > 20`, 10*time.Second)
		b.shot("logs")
		b.do("open team", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/team", a.port)))
		b.waitJS("the team page", `document.getElementById('team')?.textContent.length > 0`, 10*time.Second)
		b.shot("team")
	})

	t.Run("dark and narrow", func(t *testing.T) {
		b.t = t
		b.do("dark feed", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/feed", a.port)))
		b.waitJS("the feed", `document.querySelector('#feed .card')`, 10*time.Second)
		b.do("switch theme", chromedp.Click(chromedp.ID("theme")))
		b.waitJS("dark theme", `document.documentElement.dataset.theme === 'dark'`, 5*time.Second)
		b.shot("feed-dark")
		b.do("narrow window", chromedp.EmulateViewport(420, 800))
		b.shot("feed-narrow")
		if w := eval[float64](b, `document.documentElement.scrollWidth`); w > 420 {
			t.Errorf("narrow window scrolls sideways: page is %v px wide; widest: %s", w, eval[string](b,
				`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 421).slice(0, 8).map((e) => e.tagName + '.' + e.className + '#' + e.id + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')`))
		}
	})

	t.Run("first paint with 10,000 records", func(t *testing.T) {
		b.t = t
		big := newInstance(t)
		big.start()
		file := filepath.Join(t.TempDir(), "big.jsonl")
		writeObservations(t, file, 10_000)
		if out := big.mustRun(nil, "import", file); !strings.Contains(out, "10000") {
			t.Fatalf("import: %s", out)
		}
		url := strings.Fields(big.mustRun(nil, "viewer"))[0]
		b.do("narrow off", chromedp.EmulateViewport(1280, 800))
		var best float64
		b.mainThread() // turns the metrics on: each document counts from its navigation
		// The first load fetches and compiles the modules; a reload has them cached (they are
		// versioned): the best of three is what a person reopening the viewer sees.
		for i := range 3 {
			if i == 0 {
				b.do("log in to the big node", chromedp.Navigate(url))
			} else {
				b.do("reload", chromedp.Reload())
			}
			b.waitJS("the first cards", `performance.getEntriesByName('memnode:feed-painted').length > 0`, 10*time.Second)
			// Navigation start is time 0: the first card in the DOM, the frame after it, and
			// the browser's own first-contentful-paint.
			ms := eval[float64](b, `performance.getEntriesByName('memnode:feed-painted')[0].startTime`)
			// The renderer's main-thread CPU for this document so far (thread time: what a
			// busy machine does not inflate), and when the HTML (with the first page in it)
			// had arrived.
			cpu := b.mainThread()
			t.Logf("load %d: HTML in at %.0f ms, first card in the DOM at %.0f ms, feed painted at %.0f ms, first-contentful-paint at %.0f ms; renderer main thread %.0f ms CPU (script %.0f, style %.0f, layout %.0f) (10,000 records; load average %s); %s", i+1,
				eval[float64](b, `performance.getEntriesByType('navigation')[0].responseEnd`),
				eval[float64](b, `performance.getEntriesByName('memnode:first-card')[0].startTime`), ms,
				eval[float64](b, `performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1`),
				cpu["TaskDuration"], cpu["ScriptDuration"], cpu["RecalcStyleDuration"], cpu["LayoutDuration"], loadAvg(),
				eval[string](b, `performance.getEntriesByType('resource').map((e) => e.name.replace(location.origin, '').slice(0, 40) + ' @' + Math.round(e.startTime) + '+' + Math.round(e.duration)).join(', ')`))
			// The first page comes inside the HTML: no feed request before the first card
			// (the one after it catches up with what came before the stream opened).
			if n := eval[float64](b, `performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/viewer/feed') && e.startTime < performance.getEntriesByName('memnode:first-card')[0].startTime).length`); n != 0 {
				t.Errorf("load %d asked /api/viewer/feed %v times before its first card (want 0: the first page is in the HTML)", i+1, n)
			}
			if i == 0 || ms < best {
				best = ms
			}
		}
		// The first paint draws one page, never the whole history.
		if n := eval[float64](b, `document.querySelectorAll('#feed .card').length`); n != 50 {
			t.Errorf("first page drew %v cards, want 50", n)
		}
		// A feed watched all day shows many records at once: at least 8 whole cards in a
		// 1280×800 window.
		if n := eval[float64](b, visibleCards); n < 8 {
			t.Errorf("%v whole cards visible at 1280×800, want ≥ 8", n)
		} else {
			t.Logf("%v whole cards visible at 1280×800", n)
		}
		b.shot("feed-10k")
		// The 300 ms budget is a figure for a machine that is not busy with other work:
		// asserted only when the load average is below the CPU count, logged always.
		if idle := machineIdle(); best > 300 && idle {
			t.Errorf("first paint of the feed took %.0f ms with 10,000 records (want ≤ 300 ms)", best)
		} else if !idle {
			t.Logf("machine busy (load ≥ CPUs): first paint %.0f ms, not held to the 300 ms budget", best)
		}
		// Infinite scroll: scrolling to the end loads the next page.
		n := eval[float64](b, `document.querySelectorAll('#feed .card').length`)
		eval[bool](b, `(window.scrollTo(0, document.body.scrollHeight), true)`) // Chromium 156 (Debian) returns a Promise from scrollTo
		b.waitJS("the next page", fmt.Sprintf(`document.querySelectorAll('#feed .card').length > %v`, n), 10*time.Second)
	})
	if errors.Is(b.ctx.Err(), context.Canceled) {
		t.Fatal("the browser went away")
	}
}

// visibleCards is a JS expression: how many feed cards are wholly inside the viewport.
const visibleCards = `[...document.querySelectorAll('#feed .card')].filter((c) => { const r = c.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }).length`

// machineIdle reports whether the 1-minute load average is below the number of CPUs.
func machineIdle() bool {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return true
	}
	var load float64
	if _, err := fmt.Sscan(string(b), &load); err != nil {
		return true
	}
	return load < float64(runtime.NumCPU())
}

// writeObservations writes an export file of n observations in one session.
func writeObservations(t *testing.T, path string, n int) {
	t.Helper()
	now := time.Now().Add(-time.Hour).UnixMilli()
	recs := []importer.Record{
		{Kind: importer.KindHeader, Header: &importer.Header{Format: "memnode-export", Version: 1, ExportedAt: now}},
		{Kind: importer.KindSession, Session: &memory.Session{ID: "big-session", Project: "bigproj", Platform: "claude-code", StartedAt: now, Status: "completed", Origin: "bench-origin", HLC: uint64(now) << 16}},
	}
	types := []string{"discovery", "bugfix", "feature", "decision", "refactor", "change"}
	for i := range n {
		at := now + int64(i)
		o := &memory.Observation{ID: store.ImportID(at, fmt.Sprintf("big:%d", i)), SessionID: "big-session", Project: "bigproj",
			Type: types[i%len(types)], Title: fmt.Sprintf("Observation %d about the parser", i), Subtitle: "src/parser.go, line " + fmt.Sprint(i),
			Narrative: strings.Repeat("The parser handles nested blocks. ", 4), Facts: []string{"fact one", "fact two"},
			FilesRead: []string{"src/parser.go"}, CreatedAt: at, Origin: "bench-origin", HLC: uint64(at) << 16}
		o.ContentHash = o.HashContent()
		recs = append(recs, importer.Record{Kind: importer.KindObservation, Observation: o})
	}
	writeExport(t, path, recs)
}

// writeExport writes recs as an export file (what `memnode import FILE` reads).
func writeExport(t *testing.T, path string, recs []importer.Record) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := importer.NewWriter(f)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

package viewer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/internal/datadir"
)

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
	b := e2ekit.NewBrowser(t)
	t.Logf("screenshots in %s", b.Shots)
	ports := e2ekit.SyncPorts{}
	a, peer := e2ekit.NewSyncNode(t, "viewer-a", ports), e2ekit.NewSyncNode(t, "viewer-b", ports)
	// The key store is the passphrase file: the test never touches a real keyring.
	a.Extra = append(a.Extra, "MEMNODE_KEYS_BACKEND=file", "MEMNODE_KEYS_PASSPHRASE=viewer test passphrase")
	defer func() {
		if t.Failed() {
			logs, _ := os.ReadFile(datadir.Dir(a.DataDir).NodeLog())
			t.Logf("---- viewer-a log:\n%s", e2ekit.Tail(string(logs), 4000))
		}
	}()
	a.StartSync(t)
	a.Write("warmupword")
	token, err := datadir.Dir(a.DataDir).ReadToken()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("one-time URL logs in", func(t *testing.T) {
		b.T = t
		out := a.MustRun(nil, "viewer")
		url := strings.Fields(out)[0]
		if !strings.HasPrefix(url, fmt.Sprintf("http://127.0.0.1:%d/login?code=", a.Port)) || strings.Contains(out, token) {
			t.Fatalf("memnode viewer printed %q", out)
		}
		b.Do("open the one-time URL", chromedp.Navigate(url))
		b.WaitJS("the feed", `document.body.dataset.ready === 'true' && document.querySelector('#feed .card')`, 10*time.Second)
		if got := e2ekit.Eval[string](b, "location.href"); got != fmt.Sprintf("http://127.0.0.1:%d/#/feed", a.Port) && got != fmt.Sprintf("http://127.0.0.1:%d/", a.Port) {
			t.Errorf("after login the address bar shows %q (the code must be gone)", got)
		}
		// The session cookie is HttpOnly: the page sees only the CSRF cookie. No cookie,
		// page or script holds the token.
		cookies := e2ekit.Eval[string](b, "document.cookie")
		if strings.Contains(cookies, "memnode_session_") || !strings.Contains(cookies, "memnode_csrf_") || strings.Contains(cookies, token) {
			t.Errorf("document.cookie = %q", cookies)
		}
		if html := e2ekit.Eval[string](b, "document.documentElement.outerHTML"); strings.Contains(html, token) {
			t.Error("the page holds the token")
		}
		// The code was used up: a second browser visit is refused.
		b.Do("reuse the code", chromedp.Navigate(url))
		if txt := e2ekit.Eval[string](b, "document.body.innerText"); !strings.Contains(txt, "unknown, used or expired") {
			t.Fatalf("reused code: page says %q", txt)
		}
		b.Do("back to the viewer", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/feed", a.Port)))
		b.WaitJS("the feed again (the session outlives the code)", `document.querySelector('#feed .card')`, 10*time.Second)
	})

	t.Run("hook event appears live", func(t *testing.T) {
		b.T = t
		b.WaitJS("the live stream", `document.getElementById('live').classList.contains('on')`, 10*time.Second)
		a.Write("livehookword")
		hookDone := time.Now()
		b.WaitJS("the hook's observation in the feed", e2ekit.CardWith("livehookword"), 10*time.Second)
		took := time.Since(hookDone)
		t.Logf("hook event → card in the feed: %v", took.Round(time.Millisecond))
		if took > time.Second {
			t.Errorf("the hook's record took %v to appear (want ≤ 1 s)", took)
		}
		b.Shot("feed")
	})

	var peerID string
	t.Run("record from a paired node appears", func(t *testing.T) {
		b.T = t
		peer.StartSync(t)
		if out := peer.MustRun(nil, "peers", "join", a.Invite("2m")); !strings.Contains(out, "Joined") {
			t.Fatalf("join: %s", out)
		}
		peer.Write("pairedpeerword")
		b.WaitJS("the paired node's record in the feed", e2ekit.CardWith("pairedpeerword"), 30*time.Second)
		peerID = e2ekit.Eval[string](b, e2ekit.CardWith("pairedpeerword")+".dataset.id")
		if peerID == "" {
			t.Fatal("card without an ID")
		}
	})

	t.Run("forget in the viewer removes it on both nodes", func(t *testing.T) {
		b.T = t
		if peerID == "" {
			t.Skip("needs the paired record")
		}
		e2ekit.Eval[bool](b, e2ekit.CardWith("pairedpeerword")+`.querySelector('[data-act=menu]').click() || true`)
		// The menu's Forget is a quiet item, never a loud button on the card.
		b.WaitJS("the action menu", `document.querySelector('.menu [data-act=forget]')`, 5*time.Second)
		if n := e2ekit.Eval[float64](b, `document.querySelectorAll('#feed .card button.danger').length`); n != 0 {
			t.Errorf("%v loud danger buttons on the feed's cards", n)
		}
		e2ekit.Eval[bool](b, `document.querySelector('.menu [data-act=forget]').click() || true`)
		b.WaitJS("the confirmation dialog", `document.querySelector('dialog[open] [data-confirm]')`, 5*time.Second)
		b.Shot("forget-confirm")
		e2ekit.Eval[bool](b, `document.querySelector('dialog[open] [data-confirm]').click() || true`)
		b.WaitJS("the card to go", "!("+e2ekit.CardWith("pairedpeerword")+")", 10*time.Second)
		for _, n := range []*e2ekit.SyncNode{a, peer} {
			e2ekit.Poll(t, n.Name+" to forget the record", 30*time.Second, func() bool {
				return len(n.Find(true, "pairedpeerword")) == 0
			})
		}
	})

	t.Run("search → timeline → record", func(t *testing.T) {
		b.T = t
		base := fmt.Sprintf("http://127.0.0.1:%d/", a.Port)
		b.Do("open search", chromedp.Navigate(base+"#/search"), chromedp.WaitVisible(chromedp.ID("s-query")),
			chromedp.SendKeys(chromedp.ID("s-query"), "livehookword"), chromedp.Click(chromedp.CSS(`#main form button[type=submit]`)))
		b.WaitJS("a hit", `document.querySelector('#results .hit a')`, 10*time.Second)
		b.Shot("search")
		id := e2ekit.Eval[string](b, `document.querySelector('#results .hit').dataset.id`)
		b.Do("open the hit's timeline", chromedp.Click(chromedp.CSS(`#results .hit a`)))
		b.WaitJS("the timeline", `document.querySelector('#timeline .hit.anchor a')`, 10*time.Second)
		b.Shot("timeline")
		b.Do("open the record", chromedp.Click(chromedp.CSS(`#timeline .hit.anchor a`)))
		b.WaitJS("the record", fmt.Sprintf(`document.querySelector('#record') && document.querySelector('#record').textContent.includes(%q)`, id), 10*time.Second)
		if txt := e2ekit.Eval[string](b, `document.querySelector('.card.full').textContent`); !strings.Contains(txt, "livehookword") {
			t.Fatalf("record page: %q", txt)
		}
		b.Shot("record")
	})

	t.Run("devices page invites a third node", func(t *testing.T) {
		b.T = t
		third := e2ekit.NewSyncNode(t, "viewer-c", ports)
		third.StartSync(t)
		b.Do("open devices", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/devices", a.Port)))
		b.WaitJS("the devices table", `document.querySelectorAll('#peers tbody tr').length >= 2`, 10*time.Second)
		b.Do("create an invite", chromedp.Click(chromedp.ID("invite-create")))
		b.WaitJS("the invite code", `document.getElementById('invite-code')`, 10*time.Second)
		line := e2ekit.Eval[string](b, `document.getElementById('invite-code').textContent`)
		code, ok := strings.CutPrefix(line, "memnode peers join ")
		if !ok || !strings.HasPrefix(code, "MN1") {
			t.Fatalf("invite shown as %q", line)
		}
		if out := third.MustRun(nil, "peers", "join", code); !strings.Contains(out, "Joined") {
			t.Fatalf("third node's join: %s", out)
		}
		b.WaitJS("three devices", `document.querySelectorAll('#peers tbody tr').length === 3 && document.getElementById('peers').textContent.includes('viewer-c')`, 30*time.Second)
		// The invite stays on screen while the table refreshes; blank it for the screenshot.
		e2ekit.Eval[bool](b, `(document.getElementById('invite-code').textContent = 'memnode peers join MN1…') && true`)
		b.Shot("devices")
	})

	t.Run("settings saved and validated", func(t *testing.T) {
		b.T = t
		b.Do("open settings", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/settings", a.Port)),
			chromedp.WaitVisible(chromedp.ID("set-workers")),
			chromedp.SetValue(chromedp.ID("set-workers"), "3"), chromedp.Click(chromedp.ID("settings-save")))
		path := datadir.Dir(a.DataDir).Settings()
		e2ekit.Poll(t, "settings.json to hold workers 3", 10*time.Second, func() bool {
			var s map[string]any
			bs, err := os.ReadFile(path)
			return err == nil && json.Unmarshal(bs, &s) == nil && s["workers"] == float64(3)
		})
		b.Shot("settings")
		before, _ := os.ReadFile(path)
		b.Do("save a bad value", chromedp.SetValue(chromedp.ID("set-workers"), "0"), chromedp.Click(chromedp.ID("settings-save")))
		b.WaitJS("the validation error", `document.getElementById('settings-error').textContent.includes('workers must be')`, 10*time.Second)
		if after, _ := os.ReadFile(path); string(after) != string(before) {
			t.Fatalf("a refused value changed settings.json:\n%s", after)
		}
		// A key entered here goes to the key store and is never shown back.
		const key = "sk-viewer-test-0123456789abcdefghij"
		b.Do("store a key", chromedp.SetValue(chromedp.ID("key-provider"), "openai"), chromedp.SendKeys(chromedp.ID("key-value"), key), chromedp.Click(chromedp.ID("key-save")))
		b.WaitJS("the stored key named", `document.getElementById('keys-state').textContent.includes('openai')`, 10*time.Second)
		if html := e2ekit.Eval[string](b, "document.documentElement.outerHTML + [...document.querySelectorAll('input')].map((i) => i.value).join()"); strings.Contains(html, key) {
			t.Fatal("the page shows the stored key")
		}
		if out := a.MustRun(nil, "keys", "list"); !strings.Contains(out, "openai") {
			t.Fatalf("memnode keys list after the viewer stored one: %s", out)
		}
		b.WaitJS("the preview's projects", `[...document.getElementById('preview-project').options].some((o) => o.value === 'syncproj')`, 10*time.Second)
		e2ekit.Eval[bool](b, `(() => { const p = document.getElementById('preview-project'); p.value = 'syncproj'; p.dispatchEvent(new Event('change')); return true; })()`)
		b.WaitJS("the context preview", `document.getElementById('preview').dataset.renders > 0`, 10*time.Second)
	})

	t.Run("logs and team pages", func(t *testing.T) {
		b.T = t
		b.Do("open logs", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/logs", a.Port)))
		b.WaitJS("log lines", `document.getElementById('log')?.textContent.length > 20`, 10*time.Second)
		b.Shot("logs")
		b.Do("open team", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/team", a.Port)))
		b.WaitJS("the team page", `document.getElementById('team')?.textContent.length > 0`, 10*time.Second)
		b.Shot("team")
	})

	t.Run("dark and narrow", func(t *testing.T) {
		b.T = t
		b.Do("dark feed", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/feed", a.Port)))
		b.WaitJS("the feed", `document.querySelector('#feed .card')`, 10*time.Second)
		b.Do("switch theme", chromedp.Click(chromedp.ID("theme")))
		b.WaitJS("dark theme", `document.documentElement.dataset.theme === 'dark'`, 5*time.Second)
		b.Shot("feed-dark")
		b.Do("narrow window", chromedp.EmulateViewport(420, 800))
		b.Shot("feed-narrow")
		if w := e2ekit.Eval[float64](b, `document.documentElement.scrollWidth`); w > 420 {
			t.Errorf("narrow window scrolls sideways: page is %v px wide; widest: %s", w, e2ekit.Eval[string](b,
				`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > 421).slice(0, 8).map((e) => e.tagName + '.' + e.className + '#' + e.id + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ')`))
		}
	})

	t.Run("first paint with 10,000 records", func(t *testing.T) {
		b.T = t
		big := e2ekit.NewInstance(t)
		big.Start()
		file := filepath.Join(t.TempDir(), "big.jsonl")
		e2ekit.WriteObservations(t, file, 10_000)
		if out := big.MustRun(nil, "import", file); !strings.Contains(out, "10000") {
			t.Fatalf("import: %s", out)
		}
		url := strings.Fields(big.MustRun(nil, "viewer"))[0]
		b.Do("narrow off", chromedp.EmulateViewport(1280, 800))
		var best float64
		b.MainThread() // turns the metrics on: each document counts from its navigation
		// The first load fetches and compiles the modules; a reload has them cached (they are
		// versioned): the best of three is what a person reopening the viewer sees.
		for i := range 3 {
			if i == 0 {
				b.Do("log in to the big node", chromedp.Navigate(url))
			} else {
				b.Do("reload", chromedp.Reload())
			}
			b.WaitJS("the first cards", `performance.getEntriesByName('memnode:feed-painted').length > 0`, 10*time.Second)
			// Navigation start is time 0: the first card in the DOM, the frame after it, and
			// the browser's own first-contentful-paint.
			ms := e2ekit.Eval[float64](b, `performance.getEntriesByName('memnode:feed-painted')[0].startTime`)
			// The renderer's main-thread CPU for this document so far (thread time: what a
			// busy machine does not inflate), and when the HTML (with the first page in it)
			// had arrived.
			cpu := b.MainThread()
			t.Logf("load %d: HTML in at %.0f ms, first card in the DOM at %.0f ms, feed painted at %.0f ms, first-contentful-paint at %.0f ms; renderer main thread %.0f ms CPU (script %.0f, style %.0f, layout %.0f) (10,000 records; load average %s); %s", i+1,
				e2ekit.Eval[float64](b, `performance.getEntriesByType('navigation')[0].responseEnd`),
				e2ekit.Eval[float64](b, `performance.getEntriesByName('memnode:first-card')[0].startTime`), ms,
				e2ekit.Eval[float64](b, `performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1`),
				cpu["TaskDuration"], cpu["ScriptDuration"], cpu["RecalcStyleDuration"], cpu["LayoutDuration"], loadAvg(),
				e2ekit.Eval[string](b, `performance.getEntriesByType('resource').map((e) => e.name.replace(location.origin, '').slice(0, 40) + ' @' + Math.round(e.startTime) + '+' + Math.round(e.duration)).join(', ')`))
			// The first page comes inside the HTML: no feed request before the first card
			// (the one after it catches up with what came before the stream opened).
			if n := e2ekit.Eval[float64](b, `performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/viewer/feed') && e.startTime < performance.getEntriesByName('memnode:first-card')[0].startTime).length`); n != 0 {
				t.Errorf("load %d asked /api/viewer/feed %v times before its first card (want 0: the first page is in the HTML)", i+1, n)
			}
			if i == 0 || ms < best {
				best = ms
			}
		}
		// The first paint draws one page, never the whole history.
		if n := e2ekit.Eval[float64](b, `document.querySelectorAll('#feed .card').length`); n != 50 {
			t.Errorf("first page drew %v cards, want 50", n)
		}
		// A feed watched all day shows many records at once: at least 8 whole cards in a
		// 1280×800 window.
		if n := e2ekit.Eval[float64](b, visibleCards); n < 8 {
			t.Errorf("%v whole cards visible at 1280×800, want ≥ 8", n)
		} else {
			t.Logf("%v whole cards visible at 1280×800", n)
		}
		b.Shot("feed-10k")
		// The 300 ms budget is a figure for a machine that is not busy with other work:
		// asserted only when the load average is below the CPU count, logged always.
		if idle := machineIdle(); best > 300 && idle {
			t.Errorf("first paint of the feed took %.0f ms with 10,000 records (want ≤ 300 ms)", best)
		} else if !idle {
			t.Logf("machine busy (load ≥ CPUs): first paint %.0f ms, not held to the 300 ms budget", best)
		}
		// Infinite scroll: scrolling to the end loads the next page.
		n := e2ekit.Eval[float64](b, `document.querySelectorAll('#feed .card').length`)
		e2ekit.Eval[bool](b, `(window.scrollTo(0, document.body.scrollHeight), true)`) // Chromium 156 (Debian) returns a Promise from scrollTo
		b.WaitJS("the next page", fmt.Sprintf(`document.querySelectorAll('#feed .card').length > %v`, n), 10*time.Second)
	})
	if errors.Is(b.Ctx.Err(), context.Canceled) {
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

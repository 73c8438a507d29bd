package viewer

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/datadir"
)

// liveCap is the feed's LIVE_CAP (viewer/static/app/feed.js): the cards kept while records
// stream in at the top.
const liveCap = 200

// measureFrames starts, in the page, a record of long tasks (PerformanceObserver
// 'longtask') and of the gaps between animation frames.
const measureFrames = `(() => {
  const m = window.__frames = { long: [], gaps: [], last: 0, stop: false };
  performance.setResourceTimingBufferSize(10000);
  performance.clearResourceTimings();
  new PerformanceObserver((l) => { for (const e of l.getEntries()) m.long.push(e.duration); }).observe({ type: 'longtask' });
  const tick = (t) => { if (m.last) m.gaps.push(t - m.last); m.last = t; if (!m.stop) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  return true;
})()`

// frameStats stops the record and sums it up.
const frameStats = `(() => {
  const m = window.__frames; m.stop = true;
  const g = m.gaps.slice().sort((a, b) => a - b);
  const q = (p) => g.length ? g[Math.min(g.length - 1, Math.floor(p * g.length))] : 0;
  return JSON.stringify({ frames: g.length, p50: q(.5), p95: q(.95), max: g.length ? g[g.length - 1] : 0,
    long: m.long.length, long_ms: m.long.reduce((a, b) => a + b, 0), long_max: m.long.length ? Math.max(...m.long) : 0 });
})()`

type frameFigures struct {
	Frames  int     `json:"frames"`
	P50     float64 `json:"p50"`
	P95     float64 `json:"p95"`
	Max     float64 `json:"max"`
	Long    int     `json:"long"`
	LongMS  float64 `json:"long_ms"`
	LongMax float64 `json:"long_max"`
}

// loadAvg is /proc/loadavg's three load averages, for the log beside a wall-clock figure.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// TestViewerLiveBurst streams 50 records/s for 10 s into a real node (notes, as MCP
// save_memory writes them, over its HTTP API) while a real Chromium shows the feed, and
// measures in the page: long tasks and the gaps between animation frames. It asserts what
// cannot flake — every record was drawn live, the newest liveCap are on screen in order,
// the DOM stays bounded — and prints the timings.
func TestViewerLiveBurst(t *testing.T) {
	t.Parallel()
	b, in, c := e2ekit.StartViewerNode(t)
	e2ekit.LoginViewer(t, b, in, 0)
	b.WaitJS("the live stream", `document.getElementById('live').classList.contains('on') && document.getElementById('feed').getAttribute('aria-busy') === 'false'`, 10*time.Second)
	e2ekit.Eval[bool](b, measureFrames)
	before := b.MainThread()

	const rate, n = 50, 500
	ids := make([]string, 0, n)
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	start := time.Now()
	for i := range n {
		<-tick.C
		res, err := c.SaveNote(context.Background(), apitype.Note{Project: "burstproj", Title: fmt.Sprintf("Burst note %03d", i),
			Text: fmt.Sprintf("Record %d of the burst, streamed at %d records/s.", i, rate)})
		if err != nil {
			t.Fatalf("note %d: %v", i, err)
		}
		ids = append(ids, res.ID)
	}
	sent := time.Since(start)
	b.WaitJS("every record drawn live", fmt.Sprintf(`document.getElementById('feed').dataset.live === '%d'`, n), 30*time.Second)
	after := b.MainThread()
	per := func(k string) float64 { return (after[k] - before[k]) / n }
	t.Logf("renderer main thread (CPU time) per record: %.2f ms in tasks (script %.2f, style %.2f, layout %.2f)",
		per("TaskDuration"), per("ScriptDuration"), per("RecalcStyleDuration"), per("LayoutDuration"))
	var fig frameFigures
	if err := json.Unmarshal([]byte(e2ekit.Eval[string](b, frameStats)), &fig); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d records in %v (%.0f/s) into the open feed: %d frames, gap p50 %.1f ms, p95 %.1f ms, max %.0f ms; %d long tasks (%.0f ms in all, longest %.0f ms); load average %s",
		n, sent.Round(time.Millisecond), float64(n)/sent.Seconds(), fig.Frames, fig.P50, fig.P95, fig.Max, fig.Long, fig.LongMS, fig.LongMax, loadAvg())
	b.Shot("feed-burst")
	// The page fetches live records in batches, at most five a second: far fewer
	// requests than records, however slow the machine.
	fetches := e2ekit.Eval[float64](b, `performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/records/batch')).length`)
	t.Logf("%v record fetches for %d records", fetches, n)
	if fetches == 0 || fetches > n/4 {
		t.Errorf("the page made %v record fetches for %d live records (want 1..%d: batches, not one per record)", fetches, n, n/4)
	}

	// The newest liveCap records are on screen, newest first, and nothing else.
	var shown []string
	if err := json.Unmarshal([]byte(e2ekit.Eval[string](b, `JSON.stringify([...document.querySelectorAll('#feed .card')].map((c) => c.dataset.id))`)), &shown); err != nil {
		t.Fatal(err)
	}
	want := make([]string, 0, liveCap)
	for i := n - 1; i >= n-liveCap; i-- {
		want = append(want, ids[i])
	}
	if strings.Join(shown, ",") != strings.Join(want, ",") {
		t.Errorf("the feed shows %d cards, not the newest %d in order:\n got %.300v\nwant %.300v", len(shown), liveCap, shown, want)
	}
	// A bounded list: the DOM of the feed does not grow with the records streamed.
	nodes := e2ekit.Eval[float64](b, `document.querySelectorAll('#feed *').length`)
	t.Logf("the feed's DOM holds %v elements for %d cards", nodes, len(shown))
	if nodes > liveCap*40 {
		t.Errorf("the feed's DOM holds %v elements (want ≤ %d)", nodes, liveCap*40)
	}
	// The older records come back by scrolling down.
	e2ekit.Eval[bool](b, `(window.scrollTo(0, document.body.scrollHeight), true)`) // Chromium 156 (Debian) returns a Promise from scrollTo
	b.WaitJS("the next page below the live cards", fmt.Sprintf(`document.querySelector('#feed .card[data-id=%q]')`, ids[n-liveCap-1]), 10*time.Second)

	// Reading further down, the page does not move: new records wait behind a button.
	y := e2ekit.Eval[float64](b, `scrollY`)
	var last string
	for i := range 3 {
		res, err := c.SaveNote(context.Background(), apitype.Note{Project: "burstproj", Title: fmt.Sprintf("Late note %d", i), Text: fmt.Sprintf("Late record %d.", i)})
		if err != nil {
			t.Fatal(err)
		}
		last = res.ID
	}
	b.WaitJS("the new-records button", `!document.querySelector('.fresh').hidden && document.querySelector('.fresh').textContent.includes('3 new')`, 10*time.Second)
	if now := e2ekit.Eval[float64](b, `scrollY`); now != y {
		t.Errorf("the page moved from %v to %v while the person was reading", y, now)
	}
	b.Do("show the new records", chromedp.Click(chromedp.CSS(".fresh")))
	b.WaitJS("the new records on top", fmt.Sprintf(`document.querySelector('#feed .card').dataset.id === %q && document.querySelector('.fresh').hidden`, last), 10*time.Second)
	if n := e2ekit.Eval[float64](b, `document.querySelectorAll('#feed .card').length`); n > liveCap {
		t.Errorf("after drawing the waiting records the feed holds %v cards (want ≤ %d)", n, liveCap)
	}
}

// TestViewerAfterRestart: a node's restart keeps its browser sessions (kept hashed in the
// data dir): the open viewer reconnects, still logged in. A session the node no longer
// knows (its file gone) makes the page say so and how to log in again, instead of
// "reconnecting…" for ever.
func TestViewerAfterRestart(t *testing.T) {
	t.Parallel()
	b, in, _ := e2ekit.StartViewerNode(t)
	e2ekit.LoginViewer(t, b, in, 0)
	b.WaitJS("the live stream", `document.getElementById('live').classList.contains('on')`, 10*time.Second)
	in.MustRun(nil, "stop")
	b.WaitJS("the stream to drop", `!document.getElementById('live').classList.contains('on')`, 30*time.Second)
	in.Start()
	b.WaitJS("the live stream again, logged in", `document.getElementById('live').classList.contains('on') && !document.querySelector('.login')`, 30*time.Second)

	in.MustRun(nil, "stop")
	if err := os.Remove(datadir.Dir(in.DataDir).ViewerSessions()); err != nil {
		t.Fatal(err)
	}
	in.Start()
	b.WaitJS("the logged-out page", `document.querySelector('.login') && document.getElementById('main').textContent.includes('memnode viewer')`, 30*time.Second)
	if s := e2ekit.Eval[string](b, `document.getElementById('live').textContent`); s != "logged out" {
		t.Errorf("the header says %q after the restart", s)
	}
}

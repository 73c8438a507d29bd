package viewer

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/viewer"
)

// streamCutter is a real HTTP proxy on 127.0.0.1 between the browser and a node, which the
// page takes for the node itself (it renames the port-named cookies and the Origin both
// ways). Everything passes through, but while cut the open live streams
// (/api/viewer/stream) are dropped and the browser's reconnects are held, unanswered,
// until restore: the network between page and node, down and up again.
type streamCutter struct {
	srv  *httptest.Server
	node int // the node's port

	mu      sync.Mutex
	gate    chan struct{} // closed while the stream is let through
	streams map[*http.Request]context.CancelFunc
	held    int // reconnects waiting at the gate
	done    chan struct{}
}

func newStreamCutter(t *testing.T, nodePort int) *streamCutter {
	t.Helper()
	target := &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(nodePort)}
	sc := &streamCutter{node: nodePort, gate: make(chan struct{}), streams: map[*http.Request]context.CancelFunc{}, done: make(chan struct{})}
	close(sc.gate)
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = target.Host
			if pr.Out.Header.Get("Origin") != "" {
				pr.Out.Header.Set("Origin", "http://"+target.Host)
			}
			if c := pr.Out.Header.Get("Cookie"); c != "" {
				pr.Out.Header.Set("Cookie", strings.ReplaceAll(c, "_"+sc.port()+"=", "_"+strconv.Itoa(nodePort)+"="))
			}
		},
		ModifyResponse: func(r *http.Response) error {
			cs := r.Header.Values("Set-Cookie")
			r.Header.Del("Set-Cookie")
			for _, c := range cs {
				r.Header.Add("Set-Cookie", strings.Replace(c, "_"+strconv.Itoa(nodePort)+"=", "_"+sc.port()+"=", 1))
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(http.StatusBadGateway) },
	}
	sc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/viewer/stream" {
			rp.ServeHTTP(w, r)
			return
		}
		sc.mu.Lock()
		gate := sc.gate
		sc.held++
		sc.mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
		case <-sc.done:
		}
		ctx, cancel := context.WithCancel(r.Context())
		sc.mu.Lock()
		sc.held--
		select {
		case <-sc.done:
			cancel()
		default:
			sc.streams[r] = cancel
		}
		sc.mu.Unlock()
		defer func() {
			sc.mu.Lock()
			delete(sc.streams, r)
			sc.mu.Unlock()
			cancel()
		}()
		rp.ServeHTTP(w, r.WithContext(ctx))
	}))
	sc.srv.Start()
	// Close waits for the proxied streams: end them first.
	t.Cleanup(func() {
		sc.mu.Lock()
		close(sc.done)
		for _, cancel := range sc.streams {
			cancel()
		}
		sc.mu.Unlock()
		sc.srv.Close()
	})
	return sc
}

func (sc *streamCutter) port() string {
	return strconv.Itoa(sc.srv.Listener.Addr().(*net.TCPAddr).Port)
}

// cut drops the open streams and holds every new one until restore.
func (sc *streamCutter) cut() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.gate = make(chan struct{})
	for _, cancel := range sc.streams {
		cancel()
	}
}

// restore lets the held reconnects (and every later one) through to the node.
func (sc *streamCutter) restore() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	close(sc.gate)
}

// waiting is how many stream requests are held at the gate.
func (sc *streamCutter) waiting() int {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.held
}

// TestViewerReconnectCatchUp: the live stream between a real Chromium and a real node drops
// (a proxy in between cuts it and holds the browser's reconnects); records written meanwhile
// reach no stream, so only the page's catch-up on reconnect can show them — more of them
// than one page of the feed. After the
// stream is back every missed record is on the feed exactly once, newest first, above the
// ones drawn before, and live records stream in again. Then a cut that misses more than the
// live list keeps: the feed is drawn afresh, the newest first, without a gap or a repeat.
func TestViewerReconnectCatchUp(t *testing.T) {
	t.Parallel()
	b, in, c := e2ekit.StartViewerNode(t)
	note := func(title string) string {
		t.Helper()
		res, err := c.SaveNote(context.Background(), apitype.Note{Project: "reconnproj", Title: title, Text: "What we learned: " + title + "."})
		if err != nil {
			t.Fatal(err)
		}
		return res.ID
	}
	cardIDs := func() []string {
		var ids []string
		if err := json.Unmarshal([]byte(e2ekit.Eval[string](b, `JSON.stringify([...document.querySelectorAll('#feed .card')].map((c) => c.dataset.id))`)), &ids); err != nil {
			t.Fatal(err)
		}
		return ids
	}
	liveOn := `document.getElementById('live').classList.contains('on')`
	want := []string{note("Seeded before the page")}

	sc := newStreamCutter(t, in.Port)
	login := strings.Fields(in.MustRun(nil, "viewer"))[0]
	login = strings.Replace(login, "127.0.0.1:"+strconv.Itoa(in.Port), "127.0.0.1:"+sc.port(), 1)
	b.Do("open the one-time URL through the proxy", chromedp.Navigate(login))
	b.WaitJS("the seeded card", `document.body.dataset.ready === 'true' && document.querySelectorAll('#feed .card').length === 1`, 15*time.Second)
	b.WaitJS("the live stream", liveOn+` && document.getElementById('feed').getAttribute('aria-busy') === 'false'`, 10*time.Second)
	want = append([]string{note("Live before the cut")}, want...)
	b.WaitJS("the live card", fmt.Sprintf(`document.querySelector('#feed .card').dataset.id === %q`, want[0]), 10*time.Second)

	sc.cut()
	b.WaitJS("the page to notice the dropped stream", `!`+liveOn, 10*time.Second)
	testkit.WaitFor(t, "the browser's reconnect, held by the proxy", 15*time.Second, func() bool { return sc.waiting() > 0 })
	// More than the feed's page: the catch-up must read past its first page.
	for i := range viewer.FeedPage + 10 {
		want = append([]string{note(fmt.Sprintf("Missed while cut %d", i))}, want...)
	}
	if ids := cardIDs(); len(ids) != 2 {
		t.Fatalf("while the stream was down the feed changed to %v", ids)
	}

	sc.restore()
	b.WaitJS("the stream back", liveOn, 15*time.Second)
	b.WaitJS("the missed records", fmt.Sprintf(`document.querySelectorAll('#feed .card').length >= %d`, len(want)), 15*time.Second)
	// One record more, live: what the catch-up drew is settled once it is on top.
	want = append([]string{note("Live after the reconnect")}, want...)
	b.WaitJS("the live card after the reconnect", fmt.Sprintf(`document.querySelector('#feed .card').dataset.id === %q`, want[0]), 10*time.Second)
	if got := cardIDs(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after the reconnect the feed shows\n got %v\nwant %v (every record once, newest first)", got, want)
	}

	// More missed than the live list keeps (liveCap): the feed is drawn afresh, newest first.
	sc.cut()
	b.WaitJS("the page to notice the second drop", `!`+liveOn, 10*time.Second)
	testkit.WaitFor(t, "the browser's second reconnect, held", 15*time.Second, func() bool { return sc.waiting() > 0 })
	for i := range liveCap + 10 {
		want = append([]string{note(fmt.Sprintf("Missed in the long cut %d", i))}, want...)
	}
	sc.restore()
	b.WaitJS("the feed drawn afresh from the newest", fmt.Sprintf(`document.querySelector('#feed .card')?.dataset.id === %q && document.querySelectorAll('#feed .card').length >= %d`, want[0], viewer.FeedPage), 20*time.Second)
	got := cardIDs()
	seen := map[string]bool{}
	for i, id := range got {
		if seen[id] {
			t.Fatalf("card %s is on the feed twice: %v", id, got)
		}
		seen[id] = true
		if i >= len(want) || id != want[i] {
			t.Fatalf("after the long cut card %d is %s, want %s (newest first, no gap)", i, id, want[min(i, len(want)-1)])
		}
	}
}

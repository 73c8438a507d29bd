package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/feed"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/viewer"
)

const viewerToken = "tok-3f9a1c0d7e5b4a2c9e8f1d6b5a4c3e2f"

// fakeViewer is the settings/logs backend: it records what the routes hand it.
type fakeViewer struct {
	mu    sync.Mutex
	saved []string
	keys  []string
}

func (f *fakeViewer) Settings(context.Context) (apitype.ViewerSettings, error) {
	return apitype.ViewerSettings{File: json.RawMessage(`{}`), Fields: []apitype.SettingField{{Name: "workers", Kind: "int", Restart: true}}}, nil
}

func (f *fakeViewer) SaveSettings(_ context.Context, file json.RawMessage) (apitype.ViewerSettings, error) {
	if strings.Contains(string(file), `"workers":0`) {
		return apitype.ViewerSettings{}, fmt.Errorf("%w: settings: workers must be >= 1", memory.ErrInvalid)
	}
	f.mu.Lock()
	f.saved = append(f.saved, string(file))
	f.mu.Unlock()
	return f.Settings(context.Background())
}

func (f *fakeViewer) Log(_ context.Context, name string, _ int) (apitype.ViewerLog, error) {
	return apitype.ViewerLog{Name: name, Lines: []string{"level=INFO msg=hello"}}, nil
}

func (f *fakeViewer) Keys(context.Context) (apitype.ViewerKeys, error) {
	return apitype.ViewerKeys{Backend: "test", Stored: []string{}}, nil
}

func (f *fakeViewer) SetKey(_ context.Context, provider, key string) (apitype.ViewerKeys, error) {
	f.mu.Lock()
	f.keys = append(f.keys, provider+"="+key)
	f.mu.Unlock()
	return apitype.ViewerKeys{Backend: "test", Stored: []string{provider}}, nil
}

func (f *fakeViewer) Facets(context.Context) (apitype.ViewerFacets, error) {
	return apitype.ViewerFacets{Projects: []string{"proj"}, Platforms: []string{}, Devices: []apitype.ViewerDevice{}}, nil
}

func (f *fakeViewer) FirstRun(context.Context) (apitype.ViewerFirstRun, error) {
	return apitype.ViewerFirstRun{Agents: []string{}}, nil
}

func (f *fakeViewer) Restart(context.Context) error { return nil }

func (f *fakeViewer) StartImport(_ context.Context, platform string) (apitype.ViewerImport, error) {
	return apitype.ViewerImport{Platform: platform, Running: true}, nil
}

func (f *fakeViewer) Import(context.Context) (apitype.ViewerImport, error) {
	return apitype.ViewerImport{}, nil
}

func (f *fakeViewer) ReloadSettings(context.Context) (apitype.SettingsReload, error) {
	return apitype.SettingsReload{Applied: []string{}, Pending: []string{}}, nil
}

func (f *fakeViewer) savedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.saved)
}

var _ ViewerBackend = (*fakeViewer)(nil)

type viewerEnv struct {
	t    *testing.T
	srv  *Server
	base string // http://127.0.0.1:PORT
	bus  *feed.Bus
	fv   *fakeViewer
	hc   *http.Client
}

// startViewer runs a real server on 127.0.0.1 (the viewer's cookies and Origin check name
// its real port).
func startViewer(t *testing.T, opts ...func(*Config)) *viewerEnv {
	t.Helper()
	testkit.LeakCheck(t)
	bus := feed.New()
	fv := &fakeViewer{}
	cfg := Config{Addr: "127.0.0.1:0", Token: viewerToken, Backend: readyBackend{}, Feed: bus, Viewer: fv}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport: &http.Transport{}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		bus.Close()
	})
	return &viewerEnv{t: t, srv: s, base: "http://" + s.Addr(), bus: bus, fv: fv, hc: hc}
}

func (v *viewerEnv) do(method, path string, body string, hdr map[string]string) (*http.Response, string) {
	v.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, v.base+path, rd)
	if err != nil {
		v.t.Fatal(err)
	}
	for k, val := range hdr {
		if k == "Host" {
			req.Host = val
			continue
		}
		req.Header.Set(k, val)
	}
	res, err := v.hc.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// login gets a code with the token and redeems it; it returns the session and CSRF cookies.
func (v *viewerEnv) login() (session, csrf string) {
	v.t.Helper()
	res, body := v.do("POST", "/api/viewer/code", "", map[string]string{"Authorization": "Bearer " + viewerToken})
	if res.StatusCode != 200 {
		v.t.Fatalf("code: %d %s", res.StatusCode, body)
	}
	var code apitype.ViewerCode
	if err := json.Unmarshal([]byte(body), &code); err != nil {
		v.t.Fatal(err)
	}
	if !strings.HasPrefix(code.URL, v.base+"/login?code=") {
		v.t.Fatalf("login URL %q is not on %s", code.URL, v.base)
	}
	res, _ = v.do("GET", strings.TrimPrefix(code.URL, v.base), "", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		v.t.Fatalf("login: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	for _, c := range res.Cookies() {
		switch c.Name {
		case viewer.SessionCookie(v.srv.port()):
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
				v.t.Errorf("session cookie must be HttpOnly and SameSite=Strict: %+v", c)
			}
			session = c.Value
		case viewer.CSRFCookie(v.srv.port()):
			if c.SameSite != http.SameSiteStrictMode {
				v.t.Errorf("csrf cookie must be SameSite=Strict: %+v", c)
			}
			csrf = c.Value
		}
	}
	if session == "" || csrf == "" {
		v.t.Fatalf("login set no session/csrf cookie: %v", res.Header.Values("Set-Cookie"))
	}
	return session, csrf
}

func (v *viewerEnv) cookie(session string) string {
	return viewer.SessionCookie(v.srv.port()) + "=" + session
}

// TestViewerForeignHostRefusedOnEveryRoute: a DNS-rebinding page (Host: evil.example) gets
// 403 from every route the node has, pages, login, /health and unknown paths included.
func TestViewerForeignHostRefusedOnEveryRoute(t *testing.T) {
	v := startViewer(t)
	paths := []string{"/no-such-page", "/app/main.js", "/login?code=x"}
	for _, r := range v.srv.engine.Routes() {
		paths = append(paths, strings.ReplaceAll(strings.ReplaceAll(r.Path, ":", "x"), "*file", "main.js"))
	}
	if len(paths) < 20 {
		t.Fatalf("only %d routes: %v", len(paths), paths)
	}
	for _, p := range paths {
		for _, m := range []string{"GET", "POST"} {
			res, body := v.do(m, p, "", map[string]string{"Host": "evil.example", "Authorization": "Bearer " + viewerToken})
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s with Host evil.example: %d %s", m, p, res.StatusCode, body)
			}
			if strings.Contains(body, viewerToken) {
				t.Errorf("%s %s leaked the token", m, p)
			}
		}
	}
}

// TestViewerCrossOriginPostRefused: a logged-in browser's POST from another Origin is refused
// before it reaches a handler, even with the right CSRF token.
func TestViewerCrossOriginPostRefused(t *testing.T) {
	v := startViewer(t)
	session, csrf := v.login()
	for _, origin := range []string{"http://evil.example", "null", "http://127.0.0.1:1"} {
		res, _ := v.do("PUT", "/api/viewer/settings", `{"workers":3}`, map[string]string{"Cookie": v.cookie(session),
			viewer.CSRFHeader: csrf, "Origin": origin, "Content-Type": "application/json"})
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %s: %d, want 403", origin, res.StatusCode)
		}
	}
	if n := v.fv.savedCount(); n != 0 {
		t.Fatalf("a cross-origin request saved settings %d times", n)
	}
	res, body := v.do("PUT", "/api/viewer/settings", `{"workers":3}`, map[string]string{"Cookie": v.cookie(session),
		viewer.CSRFHeader: csrf, "Origin": v.base, "Content-Type": "application/json"})
	if res.StatusCode != 200 || v.fv.savedCount() != 1 {
		t.Fatalf("own origin: %d %s, saved %d", res.StatusCode, body, v.fv.savedCount())
	}
}

// TestViewerCSRFRequired: a state-changing request with the session cookie but without the
// CSRF header (or with another session's) gets 403; reads need only the session.
func TestViewerCSRFRequired(t *testing.T) {
	v := startViewer(t)
	session, csrf := v.login()
	_, otherCSRF := v.login()
	for name, hdr := range map[string]map[string]string{
		"no header":          {"Cookie": v.cookie(session)},
		"another session's":  {"Cookie": v.cookie(session), viewer.CSRFHeader: otherCSRF},
		"the session ID":     {"Cookie": v.cookie(session), viewer.CSRFHeader: session},
		"no session, header": {viewer.CSRFHeader: csrf},
	} {
		for _, route := range []struct{ method, path string }{{"PUT", "/api/viewer/settings"}, {"POST", "/api/events"}, {"POST", "/api/viewer/logout"}} {
			res, body := v.do(route.method, route.path, `{"workers":3}`, hdr)
			if res.StatusCode != http.StatusForbidden && res.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s, %s: %d %s", route.method, route.path, name, res.StatusCode, body)
			}
		}
	}
	if n := v.fv.savedCount(); n != 0 {
		t.Fatalf("saved %d times without a CSRF token", n)
	}
	res, body := v.do("GET", "/api/viewer/logs", "", map[string]string{"Cookie": v.cookie(session)})
	if res.StatusCode != 200 || !strings.Contains(body, "hello") {
		t.Fatalf("read with the session: %d %s", res.StatusCode, body)
	}
	res, body = v.do("PUT", "/api/viewer/settings", `{"workers":0}`, map[string]string{"Cookie": v.cookie(session), viewer.CSRFHeader: csrf})
	if res.StatusCode != 400 || !strings.Contains(body, "workers must be") {
		t.Fatalf("invalid setting: %d %s, want 400 naming the rule", res.StatusCode, body)
	}
	// A browser session cannot mint login codes: only the token holder can.
	res, _ = v.do("POST", "/api/viewer/code", "", map[string]string{"Cookie": v.cookie(session), viewer.CSRFHeader: csrf})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("code from a browser session: %d, want 403", res.StatusCode)
	}
	// Logout ends the session.
	if res, _ := v.do("POST", "/api/viewer/logout", "", map[string]string{"Cookie": v.cookie(session), viewer.CSRFHeader: csrf}); res.StatusCode != 200 {
		t.Fatalf("logout: %d", res.StatusCode)
	}
	if res, _ := v.do("GET", "/api/viewer/logs", "", map[string]string{"Cookie": v.cookie(session)}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("after logout: %d, want 403", res.StatusCode)
	}
}

// TestViewerCodeSingleUse: a login code works once; a made-up one never.
func TestViewerCodeSingleUse(t *testing.T) {
	v := startViewer(t)
	res, body := v.do("POST", "/api/viewer/code", "", map[string]string{"Authorization": "Bearer " + viewerToken})
	var code apitype.ViewerCode
	if err := json.Unmarshal([]byte(body), &code); err != nil || res.StatusCode != 200 {
		t.Fatalf("code: %d %s", res.StatusCode, body)
	}
	if time.Until(code.Expires) > viewer.DefaultCodeTTL+time.Second || time.Until(code.Expires) <= 0 {
		t.Fatalf("code expires %v", code.Expires)
	}
	path := strings.TrimPrefix(code.URL, v.base)
	if res, _ := v.do("GET", path, "", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use: %d", res.StatusCode)
	}
	res, _ = v.do("GET", path, "", nil)
	if res.StatusCode != http.StatusForbidden || len(res.Cookies()) != 0 {
		t.Fatalf("second use: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	if res, _ := v.do("GET", "/login?code=made-up", "", nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("made-up code: %d", res.StatusCode)
	}
}

// TestViewerServesNoToken: no served page, script or style, no cookie and no header holds
// the token; every answer carries the strict security headers.
func TestViewerServesNoToken(t *testing.T) {
	v := startViewer(t)
	session, csrf := v.login()
	var paths []string
	err := fs.WalkDir(viewer.Assets(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != "index.html" {
			paths = append(paths, "/"+p)
		}
		return err
	})
	if err != nil || len(paths) < 5 {
		t.Fatalf("assets: %v %v", paths, err)
	}
	paths = append(paths, "/", "/api/viewer/settings", "/api/viewer/logs", "/health")
	for _, p := range paths {
		res, body := v.do("GET", p, "", map[string]string{"Cookie": v.cookie(session)})
		if res.StatusCode != 200 {
			t.Errorf("GET %s: %d", p, res.StatusCode)
		}
		if strings.Contains(body, viewerToken) || strings.Contains(fmt.Sprint(res.Header), viewerToken) {
			t.Errorf("GET %s serves the token", p)
		}
		for k, want := range map[string]string{"X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
			if got := res.Header.Get(k); got != want {
				t.Errorf("GET %s: %s %q, want %q", p, k, got, want)
			}
		}
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Errorf("GET %s: CSP %q", p, csp)
		}
	}
	if strings.Contains(session+csrf, viewerToken) {
		t.Fatal("a cookie holds the token")
	}
	// The page has no inline script (the CSP would block it anyway); it names its module
	// under the assets' version, which is cached for good.
	version, err := viewer.Version(viewer.Assets())
	if err != nil {
		t.Fatal(err)
	}
	_, index := v.do("GET", "/", "", nil)
	if strings.Contains(index, "<script>") || !strings.Contains(index, `src="/app/`+version+`/main.js"`) || strings.Contains(index, `"/app/main.js"`) {
		t.Fatalf("index.html: inline script or no versioned module: %s", index)
	}
	res, js := v.do("GET", "/app/"+version+"/feed.js", "", nil)
	if res.StatusCode != 200 || !strings.Contains(js, "export function feedPage") || !strings.Contains(res.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("versioned module: %d, Cache-Control %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	if res, _ := v.do("GET", "/app/0123456789ab/feed.js", "", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another version's module: %d, want 404", res.StatusCode)
	}
}

// TestViewerStreamFollowsTheFeed: the live stream sends every commit of the change feed
// (any origin, forgets included) and ends when the server closes.
func TestViewerStreamFollowsTheFeed(t *testing.T) {
	v := startViewer(t)
	session, _ := v.login()
	req, _ := http.NewRequest("GET", v.base+"/api/viewer/stream", nil)
	req.Header.Set("Cookie", v.cookie(session))
	res, err := (&http.Client{}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	events := make(chan [2]string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		var ev string
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				ev = e
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{ev, d}
			}
		}
	}()
	next := func(want string) string {
		t.Helper()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatalf("stream ended waiting for %s", want)
				}
				if e[0] == want {
					return e[1]
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s event", want)
			}
		}
	}
	next("status")
	v.bus.Publish(feed.Change{Origin: feed.Device, Observations: []string{"obs-1"}})
	var ch apitype.ViewerChange
	if err := json.Unmarshal([]byte(next("change")), &ch); err != nil || ch.Origin != "device" || len(ch.Observations) != 1 || ch.Observations[0] != "obs-1" {
		t.Fatalf("change: %+v %v", ch, err)
	}
	v.bus.Publish(feed.Change{Origin: feed.Local, Forgotten: []string{"obs-1"}})
	if err := json.Unmarshal([]byte(next("change")), &ch); err != nil || len(ch.Forgotten) != 1 {
		t.Fatalf("forget: %+v %v", ch, err)
	}
	// Close ends the stream at once (an open stream would hold Shutdown to its deadline).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := v.srv.Close(ctx); err != nil {
		t.Fatalf("close with a stream open: %v", err)
	}
	for range events {
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("close waited for its deadline")
	}
}

// TestViewerKeyNeverAnsweredBack: a key entered in the viewer reaches the key store and no
// answer (the PUT's, the key list's) holds it.
func TestViewerKeyNeverAnsweredBack(t *testing.T) {
	v := startViewer(t)
	session, csrf := v.login()
	const key = "sk-test-0123456789abcdefghijklmnop"
	res, body := v.do("PUT", "/api/viewer/keys/openai", `{"key":"`+key+`"}`, map[string]string{"Cookie": v.cookie(session), viewer.CSRFHeader: csrf})
	if res.StatusCode != 200 || strings.Contains(body, key) || !strings.Contains(body, "openai") {
		t.Fatalf("put key: %d %s", res.StatusCode, body)
	}
	if _, body := v.do("GET", "/api/viewer/keys", "", map[string]string{"Cookie": v.cookie(session)}); strings.Contains(body, key) {
		t.Fatalf("key list holds the key: %s", body)
	}
	v.fv.mu.Lock()
	defer v.fv.mu.Unlock()
	if len(v.fv.keys) != 1 || v.fv.keys[0] != "openai="+key {
		t.Fatalf("key store got %v", v.fv.keys)
	}
}

// TestViewerPageCarriesTheFirstFeedPage: a logged-in page load holds the feed's first page
// (newest first, viewer.FeedPage records) in a JSON data block that no record can close;
// without a session the page holds no record.
func TestViewerPageCarriesTheFirstFeedPage(t *testing.T) {
	svc := search.NewService(testkit.OpenReplica(t, "viewer-test-origin"), search.Config{})
	ctx := context.Background()
	var ids []string
	for i := range viewer.FeedPage + 5 {
		res, err := svc.SaveNote(ctx, apitype.Note{Project: "p", Title: fmt.Sprintf("note %d </script><script>alert(1)</script>", i), Text: fmt.Sprintf("text %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.ID)
	}
	v := startViewer(t, func(c *Config) { c.Search = svc })
	session, _ := v.login()

	res, page := v.do("GET", "/", "", map[string]string{"Cookie": v.cookie(session)})
	if res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("GET /: %d, Cache-Control %q", res.StatusCode, res.Header.Get("Cache-Control"))
	}
	if strings.Contains(page, "</script><script>alert") {
		t.Fatal("a record's text closed the data block")
	}
	_, block, ok := strings.Cut(page, `<script type="application/json" id="feed-first">`)
	block, _, closed := strings.Cut(block, "</script>")
	if !ok || !closed {
		t.Fatalf("no data block in the page:\n%s", page)
	}
	var first apitype.ViewerFeed
	if err := json.Unmarshal([]byte(block), &first); err != nil {
		t.Fatalf("data block: %v", err)
	}
	if first.Hits != viewer.FeedPage || len(first.Items) != viewer.FeedPage || first.Items[0].Observation == nil ||
		first.Items[0].Observation.ID != ids[len(ids)-1] {
		t.Fatalf("first page: %d hits, %d items, first %+v (want the newest %s)", first.Hits, len(first.Items), first.Items[0], ids[len(ids)-1])
	}
	if !strings.Contains(first.Items[0].Observation.Title, "</script>") {
		t.Fatalf("title not kept: %q", first.Items[0].Observation.Title)
	}
	// The same page without a session carries no record.
	if _, anon := v.do("GET", "/", "", nil); strings.Contains(anon, "feed-first") || strings.Contains(anon, "note 1") {
		t.Fatal("a page without a session holds records")
	}
}

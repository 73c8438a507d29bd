package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/viewer"
)

// tcpRoutes is every route the node serves on its TCP port: the route rows of
// docs/API.md, which api's TestEveryRouteIsDocumented holds to the router (a route added
// later is tried too), a path parameter filled in, a query where the route wants one and a
// body that would change state if it were read.
func tcpRoutes(t *testing.T) []struct{ method, path, body string } {
	t.Helper()
	doc, err := os.ReadFile("../../docs/API.md")
	if err != nil {
		t.Fatal(err)
	}
	queries := map[string]string{"/login": "?code=x", "/api/context": "?project=p", "/api/observations/by-file": "?project=p&path=a",
		"/api/search": "?q=otheruser", "/api/timeline": "?anchor=1", "/api/team/search": "?q=x"}
	bodies := map[string]string{
		"POST /api/events":              `{"session_id":"nobody","event":"prompt","prompt":"NOBODY-WAS-HERE"}`,
		"POST /api/events/batch":        `[]`,
		"POST /api/records/batch":       `{"ids":[1]}`,
		"POST /api/forget":              `{"ids":["S1"]}`,
		"POST /api/memories":            `{"text":"NOBODY-WAS-HERE","project":"p"}`,
		"PUT /api/viewer/settings":      `{"ai":{"provider":"openai","base_url":"http://127.0.0.1:1/NOBODY"}}`,
		"PUT /api/viewer/keys/PROVIDER": `{"key":"sk-NOBODY"}`,
		"POST /api/peers/join":          `{"invite":"x"}`,
		"POST /api/viewer/code":         ``,
		"POST /api/viewer/logout":       ``,
	}
	row := regexp.MustCompile(`^\| (GET|POST|PUT|DELETE|PATCH) \| ([^|]+) \|`)
	var routes []struct{ method, path, body string }
	for _, line := range strings.Split(string(doc), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		for _, p := range regexp.MustCompile("`(/[^`]*)`").FindAllStringSubmatch(m[2], -1) {
			body, ok := bodies[m[1]+" "+p[1]]
			if !ok && m[1] != "GET" {
				body = `{}`
			}
			path := strings.ReplaceAll(strings.ReplaceAll(p[1], "/PROVIDER", "/openai"), "/*", "/main.js")
			routes = append(routes, struct{ method, path, body string }{m[1], path + queries[p[1]], body})
		}
	}
	if len(routes) < 40 {
		t.Fatalf("only %d routes in docs/API.md: its tables were not read", len(routes))
	}
	return routes
}

// viewerSession logs in to in's viewer as the user (a Go client) and returns the session
// and CSRF cookies.
func viewerSession(t *testing.T, in *e2ekit.Instance) (session, csrf *http.Cookie) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	login := strings.Fields(in.MustRun(nil, "viewer"))[0]
	res, err := hc.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	u, _ := url.Parse(login)
	for _, c := range jar.Cookies(u) {
		switch c.Name {
		case viewer.SessionCookie(in.Port):
			session = c
		case viewer.CSRFCookie(in.Port):
			csrf = c
		}
	}
	if session == nil || csrf == nil {
		t.Fatalf("login gave no viewer cookies (status %d)", res.StatusCode)
	}
	return session, csrf
}

var exportedAt = regexp.MustCompile(`"exported_at":\d+`)

// userState is what another user's requests could read or change: the export, settings,
// devices, keys and the viewer's session, read with the user's own cookies.
func userState(t *testing.T, in *e2ekit.Instance, session, csrf *http.Cookie) string {
	t.Helper()
	var b strings.Builder
	for _, p := range []string{"/api/export", "/api/viewer/settings", "/api/peers", "/api/viewer/keys", "/api/viewer/feed"} {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", in.Port, p), nil)
		req.AddCookie(session)
		req.AddCookie(csrf)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("the user's own GET %s: %v", p, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("the user's own GET %s: %d %s", p, res.StatusCode, body)
		}
		fmt.Fprintf(&b, "%s %s\n", p, exportedAt.ReplaceAll(body, nil))
	}
	settings, _ := os.ReadFile(filepath.Join(in.DataDir, "settings.json"))
	b.Write(settings)
	return b.String()
}

// TestOtherUserGetsNothingOnTCPPort is issue 26's first "done when": user nobody, holding
// the user's valid viewer session and CSRF cookies, gets no byte of an answer on any route
// of the node's TCP port (curl, and a real Chromium run as nobody), and nothing of the
// user's state changes; the user's own requests with the same cookies are served.
func TestOtherUserGetsNothingOnTCPPort(t *testing.T) {
	t.Parallel()
	cred := e2ekit.Nobody(t)
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	in := e2ekit.NewInstance(t)
	in.Start()
	c, err := client.FromDataDir(in.DataDir, in.Port)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Call(t.Context(), http.MethodPost, "/api/memories", apitype.Note{Text: "the user's secret plan OTHERUSER-MARKER", Project: "p"}, nil); err != nil {
		t.Fatalf("save a note: %v", err)
	}
	session, csrf := viewerSession(t, in)
	before := userState(t, in, session, csrf)
	if !strings.Contains(before, "OTHERUSER-MARKER") {
		t.Fatalf("the user's own export misses the note:\n%.2000s", before)
	}

	cookie := session.Name + "=" + session.Value + "; " + csrf.Name + "=" + csrf.Value
	routes := tcpRoutes(t)
	for _, r := range routes {
		u := fmt.Sprintf("http://127.0.0.1:%d%s", in.Port, r.path)
		args := []string{"-sS", "--max-time", "20", "-X", r.method, "-H", "Cookie: " + cookie,
			"-H", viewer.CSRFHeader + ": " + csrf.Value, "-H", "Content-Type: application/json", "-o", "-", "-w", "HTTP %{http_code}"}
		if r.body != "" {
			args = append(args, "--data-binary", r.body)
		}
		cmd := exec.Command(curl, append(args, u)...)
		cmd.SysProcAttr = nobodyAttr(cred)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		if err == nil || out.String() != "HTTP 000" {
			t.Errorf("nobody's %s %s was answered: %v: %q %s", r.method, r.path, err, out.String(), errb.String())
		}
	}

	// A real Chromium run as nobody, the user's cookies in its jar, opens the pages.
	if b, ok := nobodyBrowser(t, cred); ok {
		for _, c := range []*http.Cookie{session, csrf} {
			b.Do("set the user's cookie "+c.Name, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: c.Name, Value: c.Value,
					URL: fmt.Sprintf("http://127.0.0.1:%d/", in.Port)})
				return err
			}))
		}
		for _, r := range routes {
			if r.method != "GET" || r.path == "/api/viewer/stream" {
				continue
			}
			u := fmt.Sprintf("http://127.0.0.1:%d%s", in.Port, r.path)
			ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
			res, err := chromedp.RunResponse(ctx, chromedp.Navigate(u))
			cancel()
			if err == nil || res != nil {
				t.Errorf("Chromium as nobody got an answer for %s: %v", r.path, res)
			} else if !strings.Contains(err.Error(), "ERR_EMPTY_RESPONSE") && !strings.Contains(err.Error(), "ERR_CONNECTION") && !strings.Contains(err.Error(), "ERR_SOCKET_NOT_CONNECTED") {
				t.Errorf("Chromium as nobody, %s: %v (want the connection closed unanswered)", r.path, err)
			}
		}
	}

	after := userState(t, in, session, csrf)
	if after != before {
		t.Fatalf("another user's requests changed the user's state:\nbefore: %.3000s\nafter:  %.3000s", before, after)
	}
}

func nobodyAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}

// nobodyBrowser starts a headless Chromium as user nobody (its profile owned by nobody),
// or says why it cannot.
func nobodyBrowser(t *testing.T, cred *syscall.Credential) (*e2ekit.Browser, bool) {
	t.Helper()
	path := e2ekit.Chromium(t)
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Log("Chromium as nobody skipped: setpriv not installed (curl covered every route)")
		return nil, false
	}
	dir, err := os.MkdirTemp("", "nobody-chromium")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	profile := filepath.Join(dir, "profile")
	os.Mkdir(profile, 0o700)
	os.Chown(profile, int(cred.Uid), int(cred.Gid))
	wrapper := filepath.Join(dir, "chromium-as-nobody")
	script := "#!/bin/sh\nexport HOME=" + profile + "\nexec " + setpriv + " --reuid=" + strconv.Itoa(int(cred.Uid)) +
		" --regid=" + strconv.Itoa(int(cred.Gid)) + " --clear-groups " + path + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return e2ekit.NewBrowserWith(t, wrapper, profile), true
}

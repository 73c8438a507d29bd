package e2ekit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// ChromiumFlags are the flags every browser test runs Chromium with: headless, nothing
// fetched from the network, a fresh profile.
var ChromiumFlags = []string{"headless", "no-sandbox", "disable-gpu", "disable-quic", "no-first-run",
	"disable-background-networking", "disable-component-update", "disable-sync"}

// Chromium returns the browser to drive: Debian's /usr/bin/chromium (what .ci/run
// installs), or chromium on PATH. Missing, the test fails under MEMNODE_CI and skips
// otherwise.
func Chromium(t *testing.T) string {
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

// ArtifactDir is where the browser test writes its screenshots: $MEMNODE_ARTIFACTS/viewer,
// or a temp dir.
func ArtifactDir(t *testing.T) string {
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

// Browser drives one headless Chromium tab for the whole test; t is the (sub)test running.
type Browser struct {
	T      *testing.T
	Ctx    context.Context
	Shots  string
	perfOn bool // the CDP Performance domain is on (in thread time)
}

func NewBrowser(t *testing.T) *Browser {
	t.Helper()
	return NewBrowserWith(t, Chromium(t), t.TempDir())
}

// NewBrowserWith starts the browser at execPath with its profile in dir.
func NewBrowserWith(t *testing.T, execPath, dir string) *Browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(execPath), chromedp.UserDataDir(dir), chromedp.WindowSize(1280, 800)}
	for _, f := range ChromiumFlags {
		opts = append(opts, chromedp.Flag(f, true))
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Run starts the browser; it must not run under a timeout (see chromedp.Run).
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &Browser{T: t, Ctx: ctx, Shots: ArtifactDir(t)}
}

// Do runs steps with a deadline, failing the test with what it was doing.
func (b *Browser) Do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.T.Fatalf("browser: %s: %v", what, err)
	}
}

// Eval evaluates a JavaScript expression.
func Eval[T any](b *Browser, expr string) T {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.T.Fatalf("browser: eval %s: %v", expr, err)
	}
	return v
}

// WaitJS waits until expr is truthy in the page.
func (b *Browser) WaitJS(what, expr string, timeout time.Duration) {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, timeout+5*time.Second)
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
		body, _ := chromedp.Run(b.Ctx, chromedp.Evaluate[string](`document.getElementById('main')?.innerText || document.body.innerText`))
		b.T.Fatalf("browser: waiting for %s: %v\npage: %.2000s", what, err, body)
	}
}

// Shot saves a screenshot of the viewport as NAME.png in the artifact dir.
func (b *Browser) Shot(name string) {
	b.T.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.T.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(b.Shots, name+".png"), png, 0o644); err != nil {
		b.T.Fatal(err)
	}
}

// StartViewerNode is the setup of a one-node browser test: skipped in -short, a real
// Chromium, a started real node and a client of its API (to seed records before or after
// LoginViewer).
func StartViewerNode(t *testing.T) (*Browser, *Instance, *client.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short")
	}
	b := NewBrowser(t)
	in := NewInstance(t)
	in.Start()
	c, err := client.FromDataDir(in.DataDir, in.Port)
	if err != nil {
		t.Fatal(err)
	}
	return b, in, c
}

// LoginViewer opens in's one-time viewer URL and waits for n feed cards.
func LoginViewer(t *testing.T, b *Browser, in *Instance, n int) {
	t.Helper()
	url := strings.Fields(in.MustRun(nil, "viewer"))[0]
	b.Do("open the one-time URL", chromedp.Navigate(url))
	b.WaitJS(fmt.Sprintf("%d cards", n), fmt.Sprintf(`document.body.dataset.ready === 'true' && document.querySelectorAll('#feed .card').length === %d`, n), 15*time.Second)
}

// CardWith is a JS expression: the feed card whose text holds word (null when none).
func CardWith(word string) string {
	return fmt.Sprintf(`([...document.querySelectorAll('#feed .card')].find((c) => c.textContent.includes(%q)) || null)`, word)
}

// WriteObservations writes an export file of n observations in one session.
func WriteObservations(t *testing.T, path string, n int) {
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
	WriteExport(t, path, recs)
}

// WriteExport writes recs as an export file (what `memnode import FILE` reads).
func WriteExport(t *testing.T, path string, recs []importer.Record) {
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

package viewer

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/chromedp"

	"github.com/memnode/memnode/internal/testkit"
)

// TestViewerOpenKeepsTheCodeOutOfArgv is issue 26's login-link "done when": `memnode viewer
// --open` with an opener on PATH that records its argv: the argv holds a path to a 0600
// page in the 0700 data dir, never the code; user nobody reading every /proc/*/cmdline
// meanwhile sees the path but no code and cannot read the page; the user's browser opening
// the recorded page lands logged in, and the page works once.
func TestViewerOpenKeepsTheCodeOutOfArgv(t *testing.T) {
	t.Parallel()
	cred := e2ekit.Nobody(t)
	if testing.Short() {
		t.Skip("browser test skipped in -short")
	}
	b := e2ekit.NewBrowser(t)
	in := e2ekit.NewInstance(t)
	in.Start()

	bin := t.TempDir()
	rec := filepath.Join(bin, "argv")
	opener := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + rec + ".tmp && mv " + rec + ".tmp " + rec +
		"\nwhile [ ! -e " + rec + ".done ]; do sleep 0.05; done\n"
	for _, name := range []string{"xdg-open", "open"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(opener), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e2ekit.MemnodeBin, "viewer", "--open")
	cmd.Env = append(in.Env(), "PATH="+bin+":"+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the opener to run", 60*time.Second, func() bool { _, err := os.Stat(rec); return err == nil })
	argv, _ := os.ReadFile(rec)
	page := strings.TrimSpace(string(argv))
	if strings.Contains(page, "code") || strings.Contains(page, "login?") || strings.Count(page, "\n") > 0 {
		t.Fatalf("the opener's argv holds more than a page path: %q", argv)
	}
	if !strings.HasPrefix(page, in.DataDir+string(filepath.Separator)) {
		t.Fatalf("the page %q is outside the data dir", page)
	}
	for path, want := range map[string]os.FileMode{page: 0o600, filepath.Dir(page): 0o700 | os.ModeDir, in.DataDir: 0o700 | os.ModeDir} {
		if fi, err := os.Lstat(path); err != nil || fi.Mode() != want {
			t.Fatalf("%s: mode %v, %v; want %v", path, fi.Mode(), err, want)
		}
	}

	// The snooper: nobody reads every process's command line while the opener runs.
	snoop := exec.Command("/bin/sh", "-c", `for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f" 2>/dev/null; echo; done; cat "$1" 2>&1 || true`, "snoop", page)
	snoop.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	seen, err := snoop.Output()
	if err != nil {
		t.Fatalf("snooper: %v", err)
	}
	if !strings.Contains(string(seen), page) {
		t.Fatalf("the snooper did not see the opener's command line (the test proves nothing):\n%.3000s", seen)
	}
	// The code itself, read from the page as the user: other processes on the machine
	// (a CI runner's) may well have "code=" in their command lines; this one must not appear.
	body, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	code := loginCode.FindSubmatch(body)
	if code == nil {
		t.Fatalf("the login page holds no code:\n%s", body)
	}
	if bytes.Contains(seen, code[1]) {
		t.Fatalf("the snooper found the login code:\n%.3000s", seen)
	}
	if !strings.Contains(string(seen), "Permission denied") {
		t.Fatalf("nobody could read the page:\n%.3000s", seen)
	}
	os.WriteFile(rec+".done", nil, 0o600)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("memnode viewer --open: %v\n%s", err, out.String())
	}

	// The user's browser opens the page: logged in. Opened again: the code is used.
	b.Do("open the login page", chromedp.Navigate("file://"+page))
	waitAfterRedirects(t, b, "the viewer, logged in", `location.protocol === 'http:' && document.body.dataset.ready === 'true'`)
	b2 := e2ekit.NewBrowser(t)
	b2.Do("open the login page again", chromedp.Navigate("file://"+page))
	waitAfterRedirects(t, b2, "the used code refused", `location.protocol === 'http:' && document.readyState === 'complete' && document.body.innerText.includes('code')`)
	if ready := e2ekit.Eval[bool](b2, `document.body.dataset.ready === 'true'`); ready {
		t.Fatal("the login page worked twice")
	}
}

// loginCode finds the one-time code in the login page's URL.
var loginCode = regexp.MustCompile(`login\?code=([A-Za-z0-9_-]{16,})`)

// waitAfterRedirects polls expr in b's page through navigations (an evaluation that meets
// a page being replaced fails and is retried).
func waitAfterRedirects(t *testing.T, b *e2ekit.Browser, what, expr string) {
	t.Helper()
	testkit.WaitFor(t, what, 30*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(b.Ctx, 5*time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		return err == nil && ok
	})
}

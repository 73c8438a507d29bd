package main

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/internal/datadir"
)

// cmdViewer prints (and with --open opens) a one-time URL that logs a browser into the
// node's web viewer. The URL holds a short-lived single-use code, never the token.
func cmdViewer(ctx context.Context, env *cliEnv, args []string) int {
	fs := newFlags(env, "viewer", "viewer [--open]")
	open := fs.Bool("open", false, "open the URL in the default browser")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	if err := startNode(ctx, env); err != nil {
		return fail(env, "viewer: %v", err)
	}
	c, err := client.FromDialer(dialer(env))
	if err != nil {
		return fail(env, "viewer: is the node running? %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var code apitype.ViewerCode
	if err := c.Call(cctx, http.MethodPost, "/api/viewer/code", nil, &code); err != nil {
		return fail(env, "viewer: %v", err)
	}
	fmt.Fprintf(env.Stdout, "%s\n\nOpen this link to log in; it works once, until %s.\n", code.URL, code.Expires.Local().Format("15:04:05"))
	if *open {
		page, err := writeLoginPage(datadir.Dir(env.DataDir).LoginPages(), code)
		if err != nil {
			return fail(env, "viewer: %v (open the link above by hand)", err)
		}
		if err := openBrowser(page); err != nil {
			return fail(env, "viewer: open a browser: %v (open the link above by hand)", err)
		}
	}
	return 0
}

// loginPage forwards the browser to the login URL at once: a file only the user can read
// carries the code, and the opener's argv (readable by every user in /proc) carries only
// its path.
// Parsed on first use: every memnode process would pay the parse at init.
var loginPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("login").Parse(`<!doctype html>
<meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url={{.URL}}">
<title>memnode viewer</title>
<p>Opening the memnode viewer… <a href="{{.URL}}">continue</a> (this link works once, until {{.Until}}).</p>
`))
})

// writeLoginPage writes a fresh login page for code into dir (0700, made if missing) as a
// new 0600 file and returns its path. Pages whose code has expired are removed first.
func writeLoginPage(dir string, code apitype.ViewerCode) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("login page: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("login page: %w", err)
	}
	if old, err := filepath.Glob(filepath.Join(dir, "viewer-*.html")); err == nil {
		for _, p := range old {
			if fi, err := os.Lstat(p); err == nil && time.Since(fi.ModTime()) > 10*time.Minute {
				os.Remove(p)
			}
		}
	}
	var b bytes.Buffer
	if err := loginPage().Execute(&b, struct{ URL, Until string }{code.URL, code.Expires.Local().Format("15:04:05")}); err != nil {
		return "", fmt.Errorf("login page: %w", err)
	}
	name := filepath.Join(dir, "viewer-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".html")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", fmt.Errorf("login page: %w", err)
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("login page: %w", err)
	}
	return name, nil
}

// openBrowser hands url (a login page's path) to the desktop's opener, which returns once
// the browser has it.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	return cmd.Run()
}

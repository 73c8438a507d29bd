package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os/exec"
	"runtime"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
)

// cmdViewer prints (and with --open opens) a one-time URL that logs a browser into the
// node's web viewer. The URL holds a short-lived single-use code, never the token.
func cmdViewer(ctx context.Context, env *cliEnv, args []string) int {
	fs := flag.NewFlagSet("viewer", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	open := fs.Bool("open", false, "open the URL in the default browser")
	if err := fs.Parse(args); err != nil {
		return 2
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
		if err := openBrowser(code.URL); err != nil {
			return fail(env, "viewer: open a browser: %v (open the link above by hand)", err)
		}
	}
	return 0
}

// openBrowser hands url to the desktop's opener, which returns once the browser has it.
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

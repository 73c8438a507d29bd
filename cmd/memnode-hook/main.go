// Command memnode-hook is the lean twin of `memnode hook`: the same hooks.Main, linked
// without the daemon's dependencies (libp2p, SQLite, gin, cybertron), so the process an IDE
// starts for every tool call starts in a few milliseconds. `memnode install` points the IDE
// at it when it sits beside the memnode binary.
//
// Usage: memnode-hook hook <platform> <event>   (payload on stdin)
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/clienv"
	"github.com/memnode/memnode/platform/registry"
)

// version, commit and date are set by the linker, as in cmd/memnode.
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

func main() {
	args := os.Args[1:]
	if len(args) == 1 && (args[0] == "version" || args[0] == "--version") {
		fmt.Printf("memnode-hook %s (commit %s, built %s, %s/%s, %s)\n", version, commit, date, runtime.GOOS, runtime.GOARCH, runtime.Version())
		return
	}
	if len(args) == 0 || args[0] != "hook" {
		fmt.Fprintln(os.Stderr, "usage: memnode-hook hook <platform> <event>")
		os.Exit(2)
	}
	syscall.Umask(0o077) // spool, state and logs are the user's alone (see cmd/memnode)
	dataDir, settings, err := clienv.Resolve(os.Getenv)
	if err != nil {
		// A hook must never break the IDE over a bad settings file: defaults, one line.
		fmt.Fprintln(os.Stderr, "memnode:", err)
	}
	os.Exit(hooks.Main(context.Background(), registry.Builtin(), os.Getenv, dataDir, settings, startNode, version, args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// startNode runs `memnode start` (idempotent; returns when the node is ready). The memnode
// binary beside this one is preferred, then PATH. Its output is discarded: the hook's
// stdout belongs to the IDE.
func startNode(ctx context.Context) error {
	bin := "memnode"
	if sib, ok := clienv.Sibling("memnode"); ok {
		bin = sib
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return fmt.Errorf("find memnode to start the node: %w", err)
	}
	out, err := exec.CommandContext(ctx, path, "start").CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(out) > 0 {
			// The failure is start's last line (a slow start names its phases before it).
			lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
			return fmt.Errorf("memnode start: %s", lines[len(lines)-1])
		}
		return fmt.Errorf("memnode start: %w", err)
	}
	return nil
}

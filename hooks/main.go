package hooks

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/platform"
)

// Main is the whole `hook <platform> <event>` command, shared by the memnode CLI and the lean
// memnode-hook binary: args are what follows "hook", reg the registered platforms, getenv
// the process environment (for the platform's ProjectDirEnv), s the
// settings as clienv.Resolve gives them (the port always set, even after a settings error).
// It always prints one JSON object and exits 0, except when the node has been unreachable
// for too many hooks in a row (exit 2, one stderr line).
func Main(ctx context.Context, reg *platform.Registry, getenv func(string) string, dataDir string, s configs.Settings, start func(context.Context) error, version string,
	args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintf(stderr, "memnode: usage: memnode hook <platform> <event> (platforms: %s)\n", strings.Join(reg.Names(), ", "))
		fmt.Fprintln(stdout, "{}")
		return 0
	}
	p, ok := reg.Lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "memnode: unknown hook platform %q (known: %s)\n", args[0], strings.Join(reg.Names(), ", "))
		fmt.Fprintln(stdout, "{}")
		return 0
	}
	if p.Adapter == nil {
		fmt.Fprintf(stderr, "memnode: %s has no hooks (it reaches memory through MCP only)\n", p.Name)
		fmt.Fprintln(stdout, "{}")
		return 0
	}
	if Disabled(getenv) {
		return disabled(p.Adapter, args[1], stdin, stdout)
	}
	home, _ := os.UserHomeDir()
	wd, _ := os.Getwd()
	d := localnet.NewDialer(dataDir, s.Port, s.UseTCP())
	cfg := Config{
		DataDir:           dataDir,
		BaseURL:           d.BaseURL(),
		Dialer:            &d,
		Timeout:           time.Duration(s.HookTimeout),
		FailLoudThreshold: s.HookFailLoudThreshold,
		ExcludedProjects:  s.ExcludedProjects,
		SkipTools:         s.SkipTools,
		OptIn:             s.OptIn(),
		HomeDir:           home,
		WorkDir:           wd,
		ProjectDir:        projectDir(p, getenv),
		Start:             start,
		Version:           version,
	}
	return Run(ctx, cfg, p, args[1], hookStdin(stdin), stdout, stderr)
}

// DisabledEnv, set to 1 (or true, yes, on), turns every hook into a no-op: it answers
// neutrally at once, sends nothing and writes nothing.
const DisabledEnv = "MEMNODE_DISABLED"

// Disabled reports whether DisabledEnv is set to a true value.
func Disabled(getenv func(string) string) bool {
	if getenv == nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(getenv(DisabledEnv))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// disabled answers a hook while memnode is switched off: the payload is read and dropped
// (the agent's write must not fail on a closed pipe), nothing is sent or written, and the
// answer is the platform's neutral one.
func disabled(ad platform.Adapter, event string, stdin io.Reader, stdout io.Writer) int {
	r := hookStdin(stdin)
	if f, ok := r.(*os.File); ok {
		_ = f.SetReadDeadline(time.Now().Add(time.Second)) // a pipe nobody closes cannot hold us
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r, MaxInputBytes))
	out, err := ad.Format(event, platform.Result{})
	if err != nil || !validObject(out) {
		out = []byte("{}")
	}
	_, _ = stdout.Write(append(out, '\n'))
	return 0
}

// hookStdin makes sure reading stdin cannot outlast the hook's budget: an interactive
// terminal reads as empty, and a pipe is switched to non-blocking mode so that the hook's
// read deadline applies (a blocking pipe that is never closed would hang the hook).
func hookStdin(r io.Reader) io.Reader {
	f, ok := r.(*os.File)
	if !ok {
		return r
	}
	fi, err := f.Stat()
	if err != nil {
		return r
	}
	switch {
	case fi.Mode()&os.ModeCharDevice != 0:
		return strings.NewReader("")
	case fi.Mode()&os.ModeNamedPipe != 0:
		if err := syscall.SetNonblock(int(f.Fd()), true); err == nil {
			return os.NewFile(f.Fd(), f.Name()) // pollable now, so SetReadDeadline works
		}
	}
	return r
}

// projectDir is the project root the agent passes in its environment, if any.
func projectDir(p platform.Platform, getenv func(string) string) string {
	if p.ProjectDirEnv == "" || getenv == nil {
		return ""
	}
	return getenv(p.ProjectDirEnv)
}

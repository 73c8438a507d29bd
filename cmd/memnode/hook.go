package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/install"
)

// cmdHook is what the IDE runs: memnode hook <platform> <event>, payload on stdin. It always
// prints one JSON object and exits 0, except when the node has been unreachable for too
// many hooks in a row (exit 2, one stderr line).
func cmdHook(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(env.Stderr, "memnode: usage: memnode hook <platform> <event>")
		fmt.Fprintln(env.Stdout, "{}")
		return 0
	}
	s := env.Settings
	port := s.Port
	if port == 0 { // settings failed to load before the port was resolved
		port = configs.DefaultPort(os.Getuid())
	}
	home, _ := os.UserHomeDir()
	cfg := hooks.Config{
		DataDir:           env.DataDir,
		BaseURL:           fmt.Sprintf("http://127.0.0.1:%d", port),
		Timeout:           time.Duration(s.HookTimeout),
		FailLoudThreshold: s.HookFailLoudThreshold,
		ExcludedProjects:  s.ExcludedProjects,
		SkipTools:         s.SkipTools,
		HomeDir:           home,
		Start:             func(ctx context.Context) error { return startNode(ctx, env) },
		Version:           version,
	}
	return hooks.Run(ctx, cfg, args[0], args[1], hookStdin(env.Stdin), env.Stdout, env.Stderr)
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

// installArgs parses `<platform> [--scope user|project]` into install options.
func installArgs(env *cliEnv, name string, args []string) (install.Options, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	scope := fs.String("scope", install.ScopeUser, "where to install: user (~/.claude) or project (./.claude, ./.mcp.json)")
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return install.Options{}, fmt.Errorf("%w: memnode %s claude-code [--scope user|project]", errUsage, name)
	}
	platform := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return install.Options{}, fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return install.Options{}, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if platform != "claude-code" {
		return install.Options{}, fmt.Errorf("%w: platform %q is not supported yet (supported: claude-code)", errUsage, platform)
	}
	home, err := os.UserHomeDir()
	if err != nil && *scope == install.ScopeUser {
		return install.Options{}, fmt.Errorf("find home directory: %w", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return install.Options{}, fmt.Errorf("find current directory: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return install.Options{}, fmt.Errorf("find the memnode binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return install.Options{Scope: *scope, HomeDir: home, ProjectDir: cwd, Binary: exe}, nil
}

func cmdInstall(ctx context.Context, env *cliEnv, args []string) int {
	return runInstall(env, "install", args, install.InstallClaudeCode)
}

func cmdUninstall(ctx context.Context, env *cliEnv, args []string) int {
	return runInstall(env, "uninstall", args, install.UninstallClaudeCode)
}

func runInstall(env *cliEnv, name string, args []string, do func(install.Options) ([]install.Change, error)) int {
	opts, err := installArgs(env, name, args)
	if err != nil {
		fmt.Fprintf(env.Stderr, "memnode: %s: %v\n", name, err)
		return 2
	}
	changes, err := do(opts)
	for _, c := range changes {
		fmt.Fprintln(env.Stdout, c.String())
	}
	if err != nil {
		return fail(env, "%s: %v", name, err)
	}
	return 0
}

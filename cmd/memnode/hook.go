package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/internal/clienv"
)

// cmdHook is what the IDE runs: memnode hook <platform> <event>, payload on stdin. The lean
// memnode-hook binary runs the same hooks.Main faster (see cmd/memnode-hook).
func cmdHook(ctx context.Context, env *cliEnv, args []string) int {
	start := func(ctx context.Context) error { return startNode(ctx, env) }
	return hooks.Main(ctx, env.DataDir, env.Settings, start, version, args, env.Stdin, env.Stdout, env.Stderr)
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
	opts := install.Options{Scope: *scope, HomeDir: home, ProjectDir: cwd, Binary: exe}
	// The lean hook binary starts ~3× faster; every tool call pays that start-up.
	if lean, ok := clienv.Sibling("memnode-hook"); ok {
		opts.HookBinary = lean
	}
	return opts, nil
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

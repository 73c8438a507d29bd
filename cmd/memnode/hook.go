package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/internal/clienv"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/registry"
)

// cmdHook is what the IDE runs: memnode hook <platform> <event>, payload on stdin. The lean
// memnode-hook binary runs the same hooks.Main faster (see cmd/memnode-hook).
func cmdHook(ctx context.Context, env *cliEnv, args []string) int {
	start := func(ctx context.Context) error { return startNode(ctx, env) }
	return hooks.Main(ctx, registry.Builtin(), env.Getenv, env.DataDir, env.Settings, start, version, args, env.Stdin, env.Stdout, env.Stderr)
}

// platformList is the registered platforms for usage lines: "claude-code|codex|…".
func platformList() string { return strings.Join(registry.Builtin().Names(), "|") }

// installArgs parses `<platform> [--scope user|project]` into the platform and install
// options.
func installArgs(env *cliEnv, name string, args []string) (platform.Platform, install.Options, int, bool) {
	fs := newFlags(env, name, name+" "+platformList()+" [--scope user|project]")
	scope := fs.String("scope", install.ScopeUser, "where to install: user (the agent's files in your home directory) or project (in the current directory)")
	pos, code, ok := fs.parse(args, 1, 1)
	if !ok {
		return platform.Platform{}, install.Options{}, code, false
	}
	p, found := registry.Builtin().Lookup(pos[0])
	if !found {
		return platform.Platform{}, install.Options{}, fs.usageErr("platform %q is not supported (supported: %s)", pos[0],
			strings.Join(registry.Builtin().Names(), ", ")), false
	}
	if *scope != install.ScopeUser && *scope != install.ScopeProject {
		return platform.Platform{}, install.Options{}, fs.usageErr("--scope is user or project, not %q", *scope), false
	}
	opts, err := installOptions(env, name, *scope)
	if err != nil {
		return platform.Platform{}, install.Options{}, fail(env, "%s: %v", name, err), false
	}
	return p, opts, 0, true
}

// installOptions are the install options of a scope: this home and working directory, and
// the binaries the agent's files should run.
func installOptions(env *cliEnv, name, scope string) (install.Options, error) {
	home, err := os.UserHomeDir()
	if err != nil && scope == install.ScopeUser {
		return install.Options{}, fmt.Errorf("find home directory: %w", err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return install.Options{}, fmt.Errorf("find current directory: %w", err)
	}
	opts := install.Options{Scope: scope, HomeDir: home, ConfigHome: xdgConfigHome(env.Getenv), ProjectDir: cwd}
	if scope == install.ScopeProject {
		// Files a team commits name the commands, not this machine's paths.
		if _, err := exec.LookPath("memnode"); err != nil && name == "install" {
			return install.Options{}, fmt.Errorf("memnode is not in PATH: project scope writes the bare command name so the files work on every machine; put memnode (and memnode-hook) in PATH first")
		}
		opts.Binary = "memnode"
		if _, err := exec.LookPath("memnode-hook"); err == nil {
			opts.HookBinary = "memnode-hook"
		}
		return opts, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return install.Options{}, fmt.Errorf("find the memnode binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	opts.Binary = exe
	// The lean hook binary starts ~3× faster; every tool call pays that start-up.
	if lean, ok := clienv.Sibling("memnode-hook"); ok {
		opts.HookBinary = lean
	}
	return opts, nil
}

func cmdInstall(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 || (strings.HasPrefix(args[0], "-") && args[0] != "-h" && args[0] != "--help") {
		return installDetected(env, args)
	}
	code := runInstall(env, "install", args, func(p platform.Platform, opts install.Options) ([]install.Change, error) {
		return installOne(env, p, opts)
	})
	if p, found := registry.Builtin().Lookup(args[0]); found && code == 0 {
		if home, err := os.UserHomeDir(); err == nil {
			offerImport(env, p, home)
		}
	}
	return code
}

// installOne installs memnode into one agent, and records a project-scope context file.
func installOne(env *cliEnv, p platform.Platform, opts install.Options) ([]install.Change, error) {
	changes, err := p.Installer.Install(opts)
	if err != nil {
		return changes, err
	}
	more, err := registerContextFile(env.DataDir, p, opts)
	return append(changes, more...), err
}

func cmdUninstall(ctx context.Context, env *cliEnv, args []string) int {
	return runInstall(env, "uninstall", args, func(p platform.Platform, opts install.Options) ([]install.Change, error) {
		changes, err := p.Installer.Uninstall(opts)
		if err != nil {
			return changes, err
		}
		more, err := removeContextFiles(env.DataDir, p, opts)
		return append(changes, more...), err
	})
}

func runInstall(env *cliEnv, name string, args []string, do func(platform.Platform, install.Options) ([]install.Change, error)) int {
	p, opts, code, ok := installArgs(env, name, args)
	if !ok {
		return code
	}
	changes, err := do(p, opts)
	for _, c := range changes {
		fmt.Fprintln(env.Stdout, c.String())
	}
	if err != nil {
		return fail(env, "%s: %v", name, err)
	}
	return 0
}

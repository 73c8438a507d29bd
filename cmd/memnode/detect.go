package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/term"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/registry"
)

// detected is one agent found on this machine.
type detected struct {
	p   platform.Platform
	why string
}

// detectAgents lists the registered agents that look installed, in registration order.
// configHome is $XDG_CONFIG_HOME's value.
func detectAgents(reg *platform.Registry, home, configHome string, lookPath func(string) (string, error)) []detected {
	var out []detected
	for _, p := range reg.All() {
		if why, ok := p.Detect.Found(home, configHome, lookPath); ok {
			out = append(out, detected{p, why})
		}
	}
	return out
}

// installDetected is `memnode install` without a platform: it lists the agents found here
// and installs memnode into them — after a yes on a terminal, at once with --yes, into every
// registered agent with --all. Without a terminal and without a flag it only lists them.
func installDetected(env *cliEnv, args []string) int {
	fs := newFlags(env, "install", "install ["+platformList()+"] [--scope user|project] [--yes|--all]")
	scope := fs.String("scope", install.ScopeUser, "where to install: user or project")
	yes := fs.Bool("yes", false, "install into every detected agent without asking")
	all := fs.Bool("all", false, "install into every registered agent, detected or not, without asking")
	if _, code, ok := fs.parse(args, 0, 0); !ok {
		return code
	}
	if *scope != install.ScopeUser && *scope != install.ScopeProject {
		return fs.usageErr("--scope is user or project, not %q", *scope)
	}
	reg := registry.Builtin()
	home, _ := os.UserHomeDir()
	found := detectAgents(reg, home, xdgConfigHome(env.Getenv), exec.LookPath)
	if *all {
		found = found[:0]
		for _, p := range reg.All() {
			found = append(found, detected{p, "--all"})
		}
	}
	if len(found) == 0 {
		fmt.Fprintf(env.Stdout, "no coding agent found here; install one by name: memnode install %s\n", platformList())
		return 0
	}
	fmt.Fprintln(env.Stdout, "coding agents found:")
	for _, d := range found {
		fmt.Fprintf(env.Stdout, "  %-12s %s (%s)\n", d.p.Name, d.p.Display, d.why)
	}
	if !*yes && !*all {
		// Nobody can answer a question on a stdin that is not a terminal (cron, CI, an IDE
		// task, </dev/null): install nothing, and fail so that the caller notices.
		if !isTerminal(env.Stdin) {
			return fail(env, "install: stdin is not a terminal, so nothing was asked and nothing installed: run 'memnode install --yes' for all of them, or 'memnode install <platform>' for one")
		}
		fmt.Fprintf(env.Stdout, "install memnode into these %d agents? [y/N] ", len(found))
		line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(env.Stdout, "nothing installed")
			return 0
		}
	}
	opts, err := installOptions(env, "install", *scope)
	if err != nil {
		return fail(env, "install: %v", err)
	}
	code := 0
	for _, d := range found {
		changes, err := installOne(env, d.p, opts)
		for _, c := range changes {
			fmt.Fprintf(env.Stdout, "%s: %s\n", d.p.Name, c)
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "memnode: install %s: %v\n", d.p.Name, err)
			code = 1 // the others are still installed
		}
	}
	return code
}

// xdgConfigHome is $XDG_CONFIG_HOME made absolute (an agent that honours it, as OpenCode
// does through xdg-basedir, resolves a relative one against its working directory), or ""
// when it is unset or cannot be resolved.
func xdgConfigHome(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	return abs
}

// isTerminal reports whether r is an interactive terminal. /dev/null is a character
// device too, so the mode bits are not enough: ask the terminal driver.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

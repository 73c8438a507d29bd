//go:build memnode_lean

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/memnode/memnode/internal/clienv"
)

// This is the lean memnode, the client users and agents run: built with -tags memnode_lean
// it links none of the daemon's dependencies (SQLite, libp2p, gin, spago; internal/archtest
// guards it), so a `memnode search` does not pay their package inits (docs/BENCH.md). The
// commands that need them are memnoded's (run, import, repair, embed, peers, team): memnode
// replaces itself with memnoded and the same arguments (syscall.Exec: `memnode run` keeps
// its PID, signals and terminal), so every command's name, flags, output and exit code are
// the same whichever binary runs it.

// progName is what `version` prints first.
const progName = "memnode"

// daemonName is the daemon binary's file name.
const daemonName = "memnoded"

// setUpProcess has nothing to set in the lean binary (see daemon_self.go).
func setUpProcess() {}

// daemonExe finds memnoded: beside this binary first (release archives, npm and make build
// install them side by side), then on PATH.
func daemonExe() (string, error) {
	if p, ok := clienv.Sibling(daemonName); ok {
		return p, nil
	}
	p, err := exec.LookPath(daemonName)
	if err != nil {
		self, _ := os.Executable()
		return "", fmt.Errorf("%s, the daemon binary, is neither beside %s nor on PATH: reinstall memnode, memnoded comes with it (README, Install)", daemonName, self)
	}
	return p, nil
}

// execDaemon replaces this process with memnoded running the same command; it returns only
// when that fails.
func execDaemon(env *cliEnv, args []string) int {
	exe, err := daemonExe()
	if err != nil {
		return fail(env, "%s: %v", args[0], err)
	}
	err = syscall.Exec(exe, append([]string{exe}, args...), os.Environ())
	return fail(env, "%s: run %s: %v", args[0], exe, err)
}

func cmdRun(_ context.Context, env *cliEnv, args []string) int {
	return execDaemon(env, append([]string{"run"}, args...))
}

func cmdRepair(_ context.Context, env *cliEnv, args []string) int {
	return execDaemon(env, append([]string{"repair"}, args...))
}

func cmdEmbed(_ context.Context, env *cliEnv, args []string) int {
	return execDaemon(env, append([]string{"embed"}, args...))
}

func cmdPeers(_ context.Context, env *cliEnv, args []string) int {
	return execDaemon(env, append([]string{"peers"}, args...))
}

func cmdTeam(_ context.Context, env *cliEnv, args []string) int {
	return execDaemon(env, append([]string{"team"}, args...))
}

// cmdImport is memnoded's: --from-claude-mem reads claude-mem's SQLite database.
func cmdImport(_ context.Context, env *cliEnv, args []string) int {
	return execDaemon(env, append([]string{"import"}, args...))
}

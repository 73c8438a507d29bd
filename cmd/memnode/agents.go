package main

import (
	"os"
	"path/filepath"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/registry"
)

// hookups reads what the user-scope configuration of every agent runs of memnode (hooks,
// MCP server, executables that are gone): platform.Hookups. Agents whose installer cannot
// list its files are not counted; nil when the home directory is unknown.
func hookups(env *cliEnv) []platform.Hookup {
	opts, err := installOptions(env, "status", install.ScopeUser)
	if err != nil {
		return nil
	}
	return platform.Hookups(registry.Builtin(), opts)
}

// hookedUp lists the agents whose user-scope configuration runs memnode (hooks or MCP
// server), and the memnode executables such configuration names that are gone.
func hookedUp(env *cliEnv) (agents []string, stale []platform.StaleBinary) {
	hs := hookups(env)
	for _, h := range hs {
		agents = append(agents, h.Platform)
	}
	return agents, platform.StaleBinaries(hs)
}

// firstRun is what the viewer's empty feed says: the agents hooked up, claude-mem's
// database when ~/.claude-mem holds one, and the agents whose past sessions are on disk.
func firstRun(env *cliEnv) apitype.ViewerFirstRun {
	agents, _ := hookedUp(env)
	fr := apitype.ViewerFirstRun{Agents: agents}
	if home := env.Getenv("HOME"); home != "" {
		db := filepath.Join(home, ".claude-mem", "claude-mem.db")
		if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() {
			fr.ClaudeMem = db
		}
		for _, p := range registry.Builtin().All() {
			if p.History == nil {
				continue
			}
			dir := p.History.Dir(home, env.Getenv)
			if files, err := p.History.SessionFiles(dir, 0); err == nil && len(files) > 0 {
				fr.Histories = append(fr.Histories, apitype.ViewerHistory{Platform: p.Name, Display: p.Display, Dir: dir, Sessions: len(files)})
			}
		}
	}
	return fr
}

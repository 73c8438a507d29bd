package main

import (
	"os"
	"slices"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/registry"
)

// hookedUp lists the agents whose user-scope configuration runs memnode (hooks or MCP
// server), and the memnode executables such configuration names that are gone
// (platform.StaleBinaries). Agents whose installer cannot list its files are not counted.
func hookedUp(env *cliEnv) (agents []string, stale []platform.StaleBinary) {
	opts, err := installOptions(env, "status", install.ScopeUser)
	if err != nil {
		return nil, nil
	}
	reg := registry.Builtin()
	for _, p := range reg.All() {
		fl, ok := p.Installer.(platform.FileLister)
		if !ok {
			continue
		}
		for _, f := range fl.Files(opts) {
			b, err := os.ReadFile(f)
			if err == nil && len(install.Binaries(b)) > 0 && !slices.Contains(agents, p.Name) {
				agents = append(agents, p.Name)
			}
		}
	}
	return agents, platform.StaleBinaries(reg, opts)
}

package main

import (
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

// Package codex is memnode's OpenAI Codex CLI platform: the hook adapter (Codex's shell and
// apply_patch calls mapped onto the canonical tool call), the installer (hooks in
// hooks.json, the MCP server in config.toml's [mcp_servers.memnode], and the one-time hook
// trust Codex requires) and the fixtures in testdata/fixtures/codex.
package codex

import "github.com/memnode/memnode/platform"

// Name is Codex CLI's platform name on the command line and in records.
const Name = "codex"

// Platform returns Codex CLI's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:      Name,
		Display:   "Codex CLI",
		Adapter:   Adapter{},
		Installer: Installer{},
		// Codex passes no project-dir variable: hooks use the payload's cwd.
		Fixtures: "testdata/fixtures/codex",
		History:  &history,
		Detect:   platform.Detect{HomePaths: []string{".codex"}, Commands: []string{"codex"}},
	}
}

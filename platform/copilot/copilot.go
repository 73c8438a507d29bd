// Package copilot is memnode's GitHub Copilot CLI platform: the hook adapter (camelCase
// payloads that do not name their event, Copilot's view/edit/create/bash tools mapped onto
// the canonical tool call), the installer (hooks in ~/.copilot/settings.json, the MCP server
// in ~/.copilot/mcp-config.json) and the fixtures in testdata/fixtures/copilot.
package copilot

import "github.com/memnode/memnode/platform"

// Name is Copilot CLI's platform name on the command line and in records.
const Name = "copilot"

// Platform returns Copilot CLI's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:      Name,
		Display:   "GitHub Copilot CLI",
		Adapter:   Adapter{},
		Installer: Installer{},
		// Copilot passes no project-dir variable: hooks use the payload's cwd.
		Fixtures: "testdata/fixtures/copilot",
		Detect:   platform.Detect{HomePaths: []string{".copilot"}, Commands: []string{"copilot"}},
	}
}

// Package cursor is memnode's Cursor platform: the hook adapter for Cursor's agent hooks
// (hooks.json), the installer (hooks, the MCP server in mcp.json) and the rules-file
// fallback (.cursor/rules/memnode-context.mdc, alwaysApply) for builds whose hooks.json
// rejects sessionStart. Fixtures: testdata/fixtures/cursor (documented payloads; no Cursor
// build can be installed in tests).
package cursor

import (
	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/platform"
)

// Name is Cursor's platform name on the command line and in records.
const Name = "cursor"

// ContextFile is the rules file Cursor applies to every agent session of the project.
var ContextFile = contextfile.Spec{
	Path:   ".cursor/rules/memnode-context.mdc",
	Header: "---\ndescription: memnode — memory of this project from earlier sessions (kept by memnode)\nalwaysApply: true\n---",
}

// Platform returns Cursor's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:        Name,
		Display:     "Cursor",
		Adapter:     Adapter{},
		Installer:   Installer{},
		ContextFile: ContextFile,
		Detect:      platform.Detect{HomePaths: []string{".cursor"}, Commands: []string{"cursor", "cursor-agent"}},
		Fixtures:    "testdata/fixtures/cursor",
	}
}

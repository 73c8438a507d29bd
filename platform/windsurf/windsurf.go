// Package windsurf is memnode's Windsurf platform: the adapter for Cascade hooks
// (~/.codeium/windsurf/hooks.json), the installer (hooks, the MCP server in
// mcp_config.json) and the rules file memnode keeps in each project
// (.windsurf/rules/memnode-context.md, always on): Cascade hooks cannot inject context.
// Fixtures: testdata/fixtures/windsurf (documented payloads; Windsurf cannot run in tests).
package windsurf

import (
	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/platform"
)

// Name is Windsurf's platform name on the command line and in records.
const Name = "windsurf"

// ContextFile is the workspace rule Cascade applies to every conversation.
var ContextFile = contextfile.Spec{
	Path:   ".windsurf/rules/memnode-context.md",
	Header: "---\ntrigger: always_on\ndescription: memnode — memory of this project from earlier sessions (kept by memnode)\n---",
}

// Platform returns Windsurf's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:        Name,
		Display:     "Windsurf",
		Adapter:     Adapter{},
		Installer:   Installer{},
		ContextFile: ContextFile,
		Detect:      platform.Detect{HomePaths: []string{".codeium/windsurf"}, Commands: []string{"windsurf"}},
		Fixtures:    "testdata/fixtures/windsurf",
	}
}

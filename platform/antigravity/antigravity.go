// Package antigravity is memnode's Antigravity CLI platform (`agy`, Gemini CLI's
// successor): the hook adapter for its hooks.json events (PreToolUse, PostToolUse,
// PreInvocation, Stop; its payloads are camelCase and do not name their event), the
// installer (memnode's named hook in ~/.gemini/config/hooks.json, the MCP server in
// ~/.gemini/config/mcp_config.json) and GEMINI.md as the context file, since no Antigravity
// hook can hand context to the model. Fixtures: testdata/fixtures/antigravity (payloads
// documented and captured by others; no Antigravity CLI can be installed in tests).
package antigravity

import (
	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/platform"
)

// Name is Antigravity's platform name on the command line and in records.
const Name = "antigravity"

// ContextFile is the workspace context file Antigravity reads into every conversation.
var ContextFile = contextfile.Spec{Path: "GEMINI.md"}

// Platform returns Antigravity's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:        Name,
		Display:     "Antigravity CLI",
		Adapter:     Adapter{},
		Installer:   Installer{},
		ContextFile: ContextFile,
		// agy keeps its app data in ~/.gemini/antigravity-cli (the IDE in ~/.gemini/antigravity).
		Detect: platform.Detect{
			HomePaths: []string{".gemini/antigravity-cli", ".gemini/antigravity"},
			Commands:  []string{"agy"},
		},
		Fixtures: "testdata/fixtures/antigravity",
	}
}

// Package claudecode is memnode's Claude Code platform: the hook adapter, the installer
// (hooks in settings.json, the MCP server in ~/.claude.json or .mcp.json) and the fixtures
// in testdata/fixtures/claude-code.
package claudecode

import "github.com/memnode/memnode/platform"

// Name is Claude Code's platform name on the command line and in records.
const Name = "claude-code"

// Platform returns Claude Code's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:      Name,
		Display:   "Claude Code",
		Adapter:   Adapter{},
		Installer: Installer{},
		// Claude Code runs hooks with the session's project root here, whatever the cwd.
		ProjectDirEnv: "CLAUDE_PROJECT_DIR",
		Fixtures:      "testdata/fixtures/claude-code",
		Detect:        platform.Detect{HomePaths: []string{".claude", ".claude.json"}, Commands: []string{"claude"}},
	}
}

// Package claudecode is memnode's Claude Code platform: the hook adapter, the installer
// (hooks in settings.json, the MCP server in ~/.claude.json or .mcp.json) and the fixtures
// in testdata/fixtures/claude-code.
package claudecode

import (
	"path/filepath"
	"strings"

	"github.com/memnode/memnode/platform"
)

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
		History:       &history,
	}
}

// history: ~/.claude/projects/<project folder>/<session>.jsonl (a sub-agent's transcript
// in a deeper folder is not a session); the user's CLAUDE.md beside projects/; of a
// project, its CLAUDE.md and CLAUDE.local.md and the auto memory in its project folder.
var history = platform.History{
	Dir: func(home string, _ func(string) string) string { return filepath.Join(home, ".claude", "projects") },
	IsSession: func(rel string) bool {
		return strings.Count(rel, "/") == 1 && strings.HasSuffix(rel, ".jsonl")
	},
	Replay: func(path string) (platform.Replayed, error) {
		return platform.ReplayFile(path, Replay)
	},
	UserMemory: "CLAUDE.md",
	ProjectMemory: func(root, sessionFile string) []string {
		files, _ := filepath.Glob(filepath.Join(filepath.Dir(sessionFile), "memory", "*.md"))
		return append(files, filepath.Join(root, "CLAUDE.md"), filepath.Join(root, "CLAUDE.local.md"))
	},
}

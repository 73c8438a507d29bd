// Package qwencode is memnode's Qwen Code platform: the hook adapter (Claude-style hooks
// over the tools Qwen Code shares with Gemini CLI, of which it is a fork), the installer
// (hooks and the MCP server in settings.json) and the fixtures in
// testdata/fixtures/qwen-code.
package qwencode

import "github.com/memnode/memnode/platform"

// Name is Qwen Code's platform name on the command line and in records.
const Name = "qwen-code"

// Platform returns Qwen Code's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:      Name,
		Display:   "Qwen Code",
		Adapter:   Adapter{},
		Installer: Installer{},
		// Qwen Code sets the project root here for every command hook.
		ProjectDirEnv: "QWEN_PROJECT_DIR",
		Fixtures:      "testdata/fixtures/qwen-code",
		History:       &history,
		Detect:        platform.Detect{HomePaths: []string{".qwen"}, Commands: []string{"qwen"}},
	}
}

// Package geminicli is memnode's Gemini CLI platform: the hook adapter, the installer
// (hooks and the MCP server in settings.json) and the fixtures in
// testdata/fixtures/gemini-cli. Its mapping of the Gemini CLI family's tools onto the
// canonical tool call (tools.go) is shared with Qwen Code and Antigravity.
package geminicli

import "github.com/memnode/memnode/platform"

// Name is Gemini CLI's platform name on the command line and in records.
const Name = "gemini-cli"

// Platform returns Gemini CLI's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:      Name,
		Display:   "Gemini CLI",
		Adapter:   Adapter{},
		Installer: Installer{},
		// Gemini CLI runs hooks with the project root here (and CLAUDE_PROJECT_DIR as an alias).
		ProjectDirEnv: "GEMINI_PROJECT_DIR",
		Fixtures:      "testdata/fixtures/gemini-cli",
		History:       &history,
		Detect:        platform.Detect{HomePaths: []string{".gemini"}, Commands: []string{"gemini"}},
	}
}

// Package opencode is memnode's OpenCode platform. OpenCode has no command hooks: memnode
// installs a small JS plugin (plugin.js, embedded) that hands OpenCode's plugin hook
// arguments, unchanged, to `memnode-hook hook opencode <event>`; this package's adapter
// decodes them. The plugin holds no token: the hook binary reads it, as for every agent.
// Context reaches the model three ways: the session's in the system prompt
// (experimental.chat.system.transform), a prompt's (semantic inject, the answer to the
// session-init that records it) as a synthetic text part pushed onto chat.message's
// output.parts — OpenCode saves the parts after the hook and sends synthetic text to the
// model — and a file's appended to a read's output (tool.execute.after).
// Fixtures in testdata/fixtures/opencode.
package opencode

import "github.com/memnode/memnode/platform"

// Name is OpenCode's platform name on the command line and in records.
const Name = "opencode"

// Platform returns OpenCode's registry entry.
func Platform() platform.Platform {
	return platform.Platform{
		Name:      Name,
		Display:   "OpenCode",
		Adapter:   Adapter{},
		Installer: Installer{},
		Fixtures:  "testdata/fixtures/opencode",
		Detect:    platform.Detect{ConfigPaths: []string{"opencode"}, Commands: []string{"opencode"}},
		History:   &history,
	}
}

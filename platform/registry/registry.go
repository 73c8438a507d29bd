// Package registry lists the coding agents memnode supports. Adding an agent is a folder
// below platform/ and one line here; no handler, compressor or command changes.
package registry

import (
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/antigravity"
	"github.com/memnode/memnode/platform/claudecode"
	"github.com/memnode/memnode/platform/codex"
	"github.com/memnode/memnode/platform/copilot"
	"github.com/memnode/memnode/platform/cursor"
	"github.com/memnode/memnode/platform/geminicli"
	"github.com/memnode/memnode/platform/mcponly"
	"github.com/memnode/memnode/platform/opencode"
	"github.com/memnode/memnode/platform/qwencode"
	"github.com/memnode/memnode/platform/windsurf"
)

// Builtin returns the registry of every agent memnode supports.
func Builtin() *platform.Registry {
	return platform.NewRegistry(
		claudecode.Platform(),
		geminicli.Platform(),
		cursor.Platform(),
		windsurf.Platform(),
		codex.Platform(),
		copilot.Platform(),
		mcponly.GoosePlatform(),
		mcponly.RooCodePlatform(),
		mcponly.WarpPlatform(),
		qwencode.Platform(),
		opencode.Platform(),
		antigravity.Platform(),
	)
}

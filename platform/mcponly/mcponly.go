// Package mcponly is memnode's support for IDEs that have no hooks memnode can use, only MCP:
// Goose, Roo Code and Warp (claude-mem's list). Installing one writes memnode's MCP server
// where that IDE reads its servers, and with --scope project also makes the project a target
// of the node's context-file writer, so the IDE's rules file carries the project's memory.
// Nothing is captured from these IDEs: they reach memory through the MCP tools (search,
// timeline, get_observations, save_memory).
package mcponly

import (
	"github.com/memnode/memnode/contextfile"
	"github.com/memnode/memnode/platform"
)

// Platform names.
const (
	Goose   = "goose"
	RooCode = "roo-code"
	Warp    = "warp"
)

// GoosePlatform is Goose: the extension in $XDG_CONFIG_HOME/goose/config.yaml
// (~/.config/goose/ when it is unset); context in the project's .goosehints.
func GoosePlatform() platform.Platform {
	return platform.Platform{
		Name: Goose, Display: "Goose", Installer: gooseInstaller{},
		ContextFile: contextfile.Spec{Path: ".goosehints"},
		Detect:      platform.Detect{ConfigPaths: []string{"goose"}, Commands: []string{"goose"}},
	}
}

// RooCodePlatform is Roo Code: mcpServers in its VS Code global settings file (user scope,
// below $XDG_CONFIG_HOME/Code, else ~/.config/Code) or the project's .roo/mcp.json;
// context in .roo/rules/memnode-context.md.
func RooCodePlatform() platform.Platform {
	return platform.Platform{
		Name: RooCode, Display: "Roo Code", Installer: rooInstaller{},
		ContextFile: contextfile.Spec{Path: ".roo/rules/memnode-context.md"},
		Detect:      platform.Detect{ConfigPaths: []string{"Code/User/globalStorage/rooveterinaryinc.roo-cline"}},
	}
}

// WarpPlatform is Warp: its MCP servers live in the app's own settings, not in a file, so
// install prints the entry to paste; context in the project's WARP.md.
func WarpPlatform() platform.Platform {
	return platform.Platform{
		Name: Warp, Display: "Warp", Installer: warpInstaller{},
		ContextFile: contextfile.Spec{Path: "WARP.md"},
		Detect:      platform.Detect{HomePaths: []string{".warp"}, Commands: []string{"warp-terminal", "warp"}},
	}
}

package mcponly

import (
	"encoding/json"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// warpInstaller has no file to edit: Warp keeps MCP servers in its own settings (Settings →
// AI → Manage MCP Servers). Install reports the entry to paste there.
type warpInstaller struct{}

var _ platform.Installer = warpInstaller{}

// WarpEntry is memnode's server as Warp's MCP editor takes it.
func WarpEntry(binary string) string {
	b, _ := json.Marshal(map[string]any{install.MCPServerName: map[string]any{
		"command": binary, "args": []string{"mcp"}, "start_on_launch": true}})
	return string(b)
}

func (warpInstaller) Install(opts install.Options) ([]install.Change, error) {
	return []install.Change{{Path: "Warp → Settings → AI → Manage MCP Servers", Action: "unchanged",
		Detail: "Warp keeps MCP servers in its own settings: add " + WarpEntry(opts.Binary)}}, nil
}

func (warpInstaller) Uninstall(install.Options) ([]install.Change, error) {
	return []install.Change{{Path: "Warp → Settings → AI → Manage MCP Servers", Action: "unchanged",
		Detail: "remove the memnode server there"}}, nil
}

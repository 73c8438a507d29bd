package mcponly

import (
	"io/fs"
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// rooInstaller writes memnode's server into Roo Code's MCP settings.
type rooInstaller struct{}

var _ platform.Installer = rooInstaller{}

// RooSettings is Roo Code's global MCP settings file: VS Code's global storage of the
// rooveterinaryinc.roo-cline extension, below configDir, the XDG config directory
// (install.Options.UserConfigDir). VS Code on Linux puts its user data in
// $XDG_CONFIG_HOME/Code, else ~/.config/Code (userDataPath.js: VSCODE_PORTABLE, then
// VSCODE_APPDATA, then --user-data-dir, then XDG_CONFIG_HOME || ~/.config; a relative one is
// resolved against the working directory, as memnode does). Those three overrides are not
// mirrored.
func RooSettings(configDir string) string {
	return filepath.Join(configDir, "Code", "User", "globalStorage", "rooveterinaryinc.roo-cline", "settings", "mcp_settings.json")
}

func rooTarget(opts install.Options) install.Target {
	path, mode := RooSettings(opts.UserConfigDir()), fs.FileMode(0o600)
	if opts.Scope == install.ScopeProject {
		path, mode = filepath.Join(opts.ProjectDir, ".roo", "mcp.json"), 0o644
	}
	return install.Target{Platform: RooCode, MCP: path, NewMode: mode, MCPEntry: func(binary string) []install.Field {
		return []install.Field{{Key: "command", Value: binary}, {Key: "args", Value: []string{"mcp"}}, {Key: "disabled", Value: false}}
	}}
}

func (rooInstaller) Install(opts install.Options) ([]install.Change, error) {
	return install.Install(rooTarget(opts), opts)
}

func (rooInstaller) Uninstall(opts install.Options) ([]install.Change, error) {
	return install.Uninstall(rooTarget(opts), opts)
}

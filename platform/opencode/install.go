package opencode

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/platform"
)

//go:embed plugin.js
var pluginJS []byte

// pluginMarker starts the plugin file: uninstall removes only a file that starts with it.
var pluginMarker = []byte("// memnode plugin for OpenCode")

// Installer writes memnode's plugin into OpenCode's plugin folder and its MCP server under
// "mcp" in opencode.json: $XDG_CONFIG_HOME/opencode/ (user scope; ~/.config/opencode/ when
// it is unset) or <project>/.opencode/plugin/ and <project>/opencode.json (project scope).
type Installer struct{}

var _ platform.Installer = Installer{}

// paths are the plugin file and the config file of a scope.
func paths(opts install.Options) (plugin, config string) {
	if opts.Scope == install.ScopeProject {
		return filepath.Join(opts.ProjectDir, ".opencode", "plugin", "memnode.js"), filepath.Join(opts.ProjectDir, "opencode.json")
	}
	// OpenCode's global config dir is xdg-basedir's: $XDG_CONFIG_HOME/opencode.
	dir := filepath.Join(opts.UserConfigDir(), "opencode")
	return filepath.Join(dir, "plugin", "memnode.js"), filepath.Join(dir, "opencode.json")
}

// MCPEntry is memnode's entry under "mcp": OpenCode's local server shape.
func MCPEntry(binary string) []install.Field {
	return []install.Field{{Key: "type", Value: "local"}, {Key: "command", Value: []string{binary, "mcp"}}, {Key: "enabled", Value: true}}
}

func target(opts install.Options) install.Target {
	_, config := paths(opts)
	t := install.Target{Platform: Name, MCP: config, MCPKey: "mcp", MCPEntry: MCPEntry, NewMode: 0o600}
	if opts.Scope == install.ScopeProject {
		t.NewMode = 0o644
	}
	return t
}

// plugin renders the plugin for the hook binary (a JSON string is a JS string literal).
func plugin(hookBinary string) ([]byte, error) {
	lit, err := json.Marshal(hookBinary)
	if err != nil {
		return nil, fmt.Errorf("encode hook binary: %w", err)
	}
	return bytes.Replace(pluginJS, []byte("__MEMNODE_HOOK__"), lit, 1), nil
}

// Install implements platform.Installer: the MCP entry first (its file is checked before
// anything is written), then the plugin.
func (Installer) Install(opts install.Options) ([]install.Change, error) {
	changes, err := install.Install(target(opts), opts)
	if err != nil {
		return changes, err
	}
	hookBin := opts.HookBinary
	if hookBin == "" {
		hookBin = opts.Binary
	}
	want, err := plugin(hookBin)
	if err != nil {
		return changes, err
	}
	path, _ := paths(opts)
	ch := install.Change{Path: path, Detail: "memnode plugin"}
	cur, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(cur, want):
		ch.Action = "unchanged"
		return append(changes, ch), nil
	case err == nil && !bytes.HasPrefix(cur, pluginMarker):
		return changes, fmt.Errorf("%w: %s is not memnode's plugin (move it, then run again)", install.ErrMalformed, path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return changes, fmt.Errorf("read %s: %w", path, err)
	}
	ch.Action = "updated"
	if err != nil {
		ch.Action = "created"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return changes, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := atomicfile.Write(path, want, 0o644); err != nil {
		return changes, fmt.Errorf("write %s: %w", path, err)
	}
	return append(changes, ch), nil
}

// Uninstall implements platform.Installer: the MCP entry, and the plugin file when it is
// memnode's (a file of the same name that is not stays), then the plugin folder if that
// left it empty.
func (Installer) Uninstall(opts install.Options) ([]install.Change, error) {
	changes, err := install.Uninstall(target(opts), opts)
	if err != nil {
		return changes, err
	}
	path, _ := paths(opts)
	ch := install.Change{Path: path, Detail: "memnode plugin", Action: "absent"}
	cur, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return changes, fmt.Errorf("read %s: %w", path, err)
	case !bytes.HasPrefix(cur, pluginMarker):
		ch.Action, ch.Detail = "unchanged", "not memnode's plugin"
	default:
		if err := os.Remove(path); err != nil {
			return changes, fmt.Errorf("remove %s: %w", path, err)
		}
		_ = os.Remove(filepath.Dir(path)) // only succeeds when empty
		ch.Action = "removed"
	}
	return append(changes, ch), nil
}

// Files implements platform.FileLister.
func (Installer) Files(opts install.Options) []string {
	plugin, config := paths(opts)
	return []string{plugin, config}
}

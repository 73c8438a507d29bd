package windsurf

import (
	"io/fs"
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Installer writes memnode's hooks into ~/.codeium/windsurf/hooks.json (project scope:
// <project>/.windsurf/hooks.json) and its MCP server into
// ~/.codeium/windsurf/mcp_config.json (Windsurf has no per-project MCP file).
type Installer struct{}

var _ platform.Installer = Installer{}

// HookSpecs are the Cascade hooks memnode installs. Cascade has no session-start hook and
// hooks cannot inject: context arrives through the rules file. post_cascade_response
// carries the turn's response: the summary input. There is no session end.
func HookSpecs() []install.HookSpec {
	return []install.HookSpec{
		{Event: "pre_user_prompt", Sub: platform.EventSessionInit},
		{Event: "post_read_code", Sub: platform.EventObservation},
		{Event: "post_write_code", Sub: platform.EventObservation},
		{Event: "post_run_command", Sub: platform.EventObservation},
		{Event: "post_mcp_tool_use", Sub: platform.EventObservation},
		{Event: "post_cascade_response", Sub: platform.EventSummarize},
	}
}

// flat is hooks.json's shape: {"hooks": {event: [{command, show_output}]}}.
var flat = install.FlatHooks{Entry: func(cmd string, _ install.HookSpec) []install.Field {
	return []install.Field{{Key: "command", Value: cmd}, {Key: "show_output", Value: false}}
}}

func target(opts install.Options) install.Target {
	user := filepath.Join(opts.HomeDir, ".codeium", "windsurf")
	hooks := filepath.Join(user, "hooks.json")
	var mode fs.FileMode = 0o600
	if opts.Scope == install.ScopeProject {
		hooks = filepath.Join(opts.ProjectDir, ".windsurf", "hooks.json")
		mode = 0o644 // a file a team commits
	}
	f := flat
	return install.Target{
		Platform: Name, Hooks: HookSpecs(), Flat: &f, MCPEntry: mcpEntry,
		Settings: hooks, MCP: filepath.Join(user, "mcp_config.json"), NewMode: mode,
	}
}

// mcpEntry is memnode's server in mcp_config.json.
func mcpEntry(binary string) []install.Field {
	return []install.Field{{Key: "command", Value: binary}, {Key: "args", Value: []string{"mcp"}}}
}

// Install implements platform.Installer.
func (Installer) Install(opts install.Options) ([]install.Change, error) {
	return install.Install(target(opts), opts)
}

// Uninstall implements platform.Installer.
func (Installer) Uninstall(opts install.Options) ([]install.Change, error) {
	return install.Uninstall(target(opts), opts)
}

// Files implements platform.FileLister.
func (Installer) Files(opts install.Options) []string {
	t := target(opts)
	return []string{t.Settings, t.MCP}
}

package antigravity

import (
	"io/fs"
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Installer writes memnode's named hook into Antigravity's hooks.json and its MCP server
// into mcp_config.json: ~/.gemini/config/ (user scope, the files agy reads for every
// workspace) or <project>/.agents/ (project scope).
type Installer struct{}

var _ platform.Installer = Installer{}

// HookSpecs are the Antigravity hooks memnode installs (timeouts in seconds). Antigravity
// has only PreToolUse, PostToolUse, PreInvocation, PostInvocation and Stop (and no session
// start or end): PreToolUse records each call (PostToolUse carries neither the tool nor its
// result), PostToolUse the failures, PreInvocation the prompt, Stop the turn's summary.
// PostInvocation fires after every model call and carries nothing memnode records.
func HookSpecs() []install.HookSpec {
	return []install.HookSpec{
		{Event: "PreInvocation", Sub: platform.EventSessionInit, Timeout: 30},
		{Event: "PreToolUse", Matcher: "*", Sub: platform.EventObservation, Timeout: 30},
		{Event: "PostToolUse", Matcher: "*", Sub: platform.EventObservation, Timeout: 30},
		{Event: "Stop", Sub: platform.EventSummarize, Timeout: 60},
	}
}

// mcpEntry is memnode's server in mcp_config.json (a stdio server: command and args).
func mcpEntry(binary string) []install.Field {
	return []install.Field{{Key: "command", Value: binary}, {Key: "args", Value: []string{"mcp"}}}
}

func target(opts install.Options) install.Target {
	dir := filepath.Join(opts.HomeDir, ".gemini", "config")
	var mode fs.FileMode = 0o600
	if opts.Scope == install.ScopeProject {
		dir = filepath.Join(opts.ProjectDir, ".agents")
		mode = 0o644 // files a team commits
	}
	return install.Target{
		Platform: Name, Hooks: HookSpecs(), Named: &install.NamedHooks{Name: install.MCPServerName},
		MCPEntry: mcpEntry, Settings: filepath.Join(dir, "hooks.json"), MCP: filepath.Join(dir, "mcp_config.json"),
		NewMode: mode,
	}
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

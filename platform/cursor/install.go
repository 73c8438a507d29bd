package cursor

import (
	"io/fs"
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Installer writes memnode's hooks into Cursor's hooks.json and its MCP server into
// mcp.json: ~/.cursor/ (user scope) or <project>/.cursor/ (project scope).
type Installer struct{}

var _ platform.Installer = Installer{}

// HookSpecs are the Cursor hooks memnode installs (timeouts in seconds).
// afterShellExecution and afterFileEdit record shell commands and edits (every Cursor build
// with hooks has them); postToolUse and postToolUseFailure record every other tool (the
// adapter leaves out the calls the first two record). afterAgentResponse carries the
// agent's reply, so it is the turn's summary; stop carries only a status and is not used.
func HookSpecs() []install.HookSpec {
	return []install.HookSpec{
		{Event: "sessionStart", Sub: platform.EventContext, Timeout: 60},
		{Event: "beforeSubmitPrompt", Sub: platform.EventSessionInit, Timeout: 60},
		{Event: "postToolUse", Sub: platform.EventObservation, Timeout: 120},
		{Event: "postToolUseFailure", Sub: platform.EventObservation, Timeout: 120},
		{Event: "afterShellExecution", Sub: platform.EventObservation, Timeout: 120},
		{Event: "afterFileEdit", Sub: platform.EventObservation, Timeout: 120},
		{Event: "afterAgentResponse", Sub: platform.EventSummarize, Timeout: 120},
		{Event: "sessionEnd", Sub: platform.EventSessionEnd, Timeout: 60},
	}
}

// flat is hooks.json's shape: {"version": 1, "hooks": {event: [{command, timeout}]}}.
var flat = install.FlatHooks{Top: []install.Field{{Key: "version", Value: 1}}}

func target(opts install.Options) install.Target {
	dir := filepath.Join(opts.HomeDir, ".cursor")
	var mode fs.FileMode = 0o600
	if opts.Scope == install.ScopeProject {
		dir = filepath.Join(opts.ProjectDir, ".cursor")
		mode = 0o644 // files a team commits
	}
	f := flat
	return install.Target{
		Platform: Name, Hooks: HookSpecs(), Flat: &f, MCPEntry: mcpEntry,
		Settings: filepath.Join(dir, "hooks.json"), MCP: filepath.Join(dir, "mcp.json"),
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

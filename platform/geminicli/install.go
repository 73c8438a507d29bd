package geminicli

import (
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Installer writes memnode's hooks and MCP server into Gemini CLI's settings.json:
// ~/.gemini/settings.json (user scope) or <project>/.gemini/settings.json (project scope;
// Gemini CLI loads project hooks only in a trusted folder).
type Installer struct{}

var _ platform.Installer = Installer{}

// HookSpecs are the Gemini CLI hooks memnode installs (timeouts in milliseconds, Gemini
// CLI's unit). BeforeTool cannot add context, so a read's file context is appended to its
// result by the AfterTool hook that records the call: one process per tool call. AfterTool
// fires for failed calls too. SessionEnd is best effort: the
// CLI does not wait for it. BeforeModel, AfterModel and PreCompress fire per model request
// or chunk and carry nothing memnode records.
func HookSpecs() []install.HookSpec {
	return []install.HookSpec{
		{Event: "SessionStart", Sub: platform.EventContext, Timeout: 60000},
		{Event: "BeforeAgent", Sub: platform.EventSessionInit, Timeout: 60000},
		{Event: "AfterTool", Matcher: ".*", Sub: platform.EventObservation, Timeout: 120000},
		{Event: "AfterAgent", Sub: platform.EventSummarize, Timeout: 120000},
		{Event: "SessionEnd", Sub: platform.EventSessionEnd, Timeout: 60000},
	}
}

// MCPEntry is memnode's entry in mcpServers: Gemini CLI's stdio shape has no "type".
func MCPEntry(binary string) []install.Field {
	return []install.Field{{Key: "command", Value: binary}, {Key: "args", Value: []string{"mcp"}}}
}

// target is what a scope's installation edits.
func target(opts install.Options) install.Target {
	t := install.Target{Platform: Name, Hooks: HookSpecs(), MCPEntry: MCPEntry, NewMode: 0o600}
	dir := filepath.Join(opts.HomeDir, ".gemini")
	if opts.Scope == install.ScopeProject {
		dir = filepath.Join(opts.ProjectDir, ".gemini")
		t.NewMode = 0o644 // a file a team commits
	}
	t.Settings = filepath.Join(dir, "settings.json")
	t.MCP = t.Settings
	return t
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

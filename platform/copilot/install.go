package copilot

import (
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Installer writes memnode's hooks into Copilot CLI's ~/.copilot/settings.json and its MCP
// server into ~/.copilot/mcp-config.json; project scope writes .github/hooks/memnode.json
// (loaded in a trusted folder) and .github/mcp.json.
type Installer struct{}

var _ platform.Installer = Installer{}

// HookSpecs are the Copilot hooks memnode installs (timeouts in seconds). Copilot hooks
// have no matcher: postToolUse fires for every tool, postToolUseFailure for a failed one.
// preToolUse cannot add context, so the file context of a view (or a bash read) is the
// additionalContext of the postToolUse hook that records the call: one process per tool
// call.
func HookSpecs() []install.HookSpec {
	return []install.HookSpec{
		{Event: "sessionStart", Sub: platform.EventContext, Timeout: 60},
		{Event: "userPromptSubmitted", Sub: platform.EventSessionInit, Timeout: 60},
		{Event: "postToolUse", Sub: platform.EventObservation, Timeout: 120},
		{Event: "postToolUseFailure", Sub: platform.EventObservation, Timeout: 120},
		{Event: "agentStop", Sub: platform.EventSummarize, Timeout: 120},
		{Event: "sessionEnd", Sub: platform.EventSessionEnd, Timeout: 60},
	}
}

// flat is Copilot's hook entry: {"type": "command", "bash": cmd, "timeoutSec": n}.
func flat(top []install.Field) *install.FlatHooks {
	return &install.FlatHooks{
		CommandKey: "bash",
		Entry: func(cmd string, spec install.HookSpec) []install.Field {
			return []install.Field{{Key: "type", Value: "command"}, {Key: "bash", Value: cmd}, {Key: "timeoutSec", Value: spec.Timeout}}
		},
		Top: top,
	}
}

// MCPEntry is memnode's entry in mcpServers: a local (stdio) server offering all its tools.
func MCPEntry(binary string) []install.Field {
	return []install.Field{{Key: "type", Value: "local"}, {Key: "command", Value: binary},
		{Key: "args", Value: []string{"mcp"}}, {Key: "tools", Value: []string{"*"}}}
}

func target(opts install.Options) install.Target {
	t := install.Target{Platform: Name, Hooks: HookSpecs(), MCPEntry: MCPEntry, NewMode: 0o600}
	if opts.Scope == install.ScopeProject {
		t.Settings = filepath.Join(opts.ProjectDir, ".github", "hooks", "memnode.json")
		t.MCP = filepath.Join(opts.ProjectDir, ".github", "mcp.json")
		t.Flat = flat([]install.Field{{Key: "version", Value: 1}})
		t.NewMode = 0o644 // files a team commits
		return t
	}
	dir := filepath.Join(opts.HomeDir, ".copilot")
	t.Settings, t.MCP = filepath.Join(dir, "settings.json"), filepath.Join(dir, "mcp-config.json")
	t.Flat = flat(nil)
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

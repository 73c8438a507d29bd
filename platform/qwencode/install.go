package qwencode

import (
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/geminicli"
)

// Installer writes memnode's hooks and MCP server into Qwen Code's settings.json:
// ~/.qwen/settings.json (user scope) or <project>/.qwen/settings.json (project scope; Qwen
// Code loads project hooks only in a trusted folder).
type Installer struct{}

var _ platform.Installer = Installer{}

// HookSpecs are the Qwen Code hooks memnode installs (timeouts in seconds). A read's file
// context is appended to its result by the PostToolUse hook that records the call, one
// process per tool call (PreToolUse's answer is a permission decision memnode never gives). PostToolUseFailure carries failed calls, non-zero shell
// exits included. `qwen -p` fires no SessionEnd: Stop summarizes.
func HookSpecs() []install.HookSpec {
	return []install.HookSpec{
		{Event: "SessionStart", Sub: platform.EventContext, Timeout: 60},
		{Event: "UserPromptSubmit", Sub: platform.EventSessionInit, Timeout: 60},
		{Event: "PostToolUse", Matcher: "*", Sub: platform.EventObservation, Timeout: 120},
		{Event: "PostToolUseFailure", Matcher: "*", Sub: platform.EventObservation, Timeout: 120},
		{Event: "Stop", Sub: platform.EventSummarize, Timeout: 120},
		{Event: "SessionEnd", Sub: platform.EventSessionEnd, Timeout: 60},
	}
}

func target(opts install.Options) install.Target {
	// mcpServers has Gemini CLI's stdio shape.
	t := install.Target{Platform: Name, Hooks: HookSpecs(), MCPEntry: geminicli.MCPEntry, NewMode: 0o600,
		// Qwen Code migrates settings.json on every start, writing "$version" (and re-indenting
		// what it touched): uninstall still gives back the user's bytes when that is all that
		// changed since.
		AgentKeys: []string{"$version"}}
	dir := filepath.Join(opts.HomeDir, ".qwen")
	if opts.Scope == install.ScopeProject {
		dir = filepath.Join(opts.ProjectDir, ".qwen")
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

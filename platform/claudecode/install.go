package claudecode

import (
	"path/filepath"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// Installer writes memnode's hooks into Claude Code's settings.json and its MCP server into
// ~/.claude.json (user scope) or ./.mcp.json (project scope).
type Installer struct{}

var _ platform.Installer = Installer{}

// hookSpecs are the Claude Code hooks memnode installs. SessionStart's matcher includes
// resume (claude -c, --resume); PostToolUseFailure carries the calls that failed (2.1.x
// fires it instead of PostToolUse). There is no SubagentStop hook: a subagent's turn is not
// the session's end, and its calls are recorded by PostToolUse anyway.
func hookSpecs() []install.HookSpec {
	return []install.HookSpec{
		{Event: "SessionStart", Matcher: "startup|resume|clear|compact", Sub: platform.EventContext, Timeout: 60},
		{Event: "UserPromptSubmit", Sub: platform.EventSessionInit, Timeout: 60},
		{Event: "PreToolUse", Matcher: "Read", Sub: platform.EventFileContext, Timeout: 60},
		{Event: "PostToolUse", Matcher: "*", Sub: platform.EventObservation, Timeout: 120},
		{Event: "PostToolUseFailure", Matcher: "*", Sub: platform.EventObservation, Timeout: 120},
		{Event: "Stop", Sub: platform.EventSummarize, Timeout: 120},
		{Event: "SessionEnd", Sub: platform.EventSessionEnd, Timeout: 60},
	}
}

// target is what a scope's installation edits.
func target(opts install.Options) install.Target {
	t := install.Target{Platform: Name, Hooks: hookSpecs(), NewMode: 0o600}
	if opts.Scope == install.ScopeProject {
		t.Settings = filepath.Join(opts.ProjectDir, ".claude", "settings.json")
		t.MCP = filepath.Join(opts.ProjectDir, ".mcp.json")
		t.NewMode = 0o644 // files a team commits
		return t
	}
	t.Settings = filepath.Join(opts.HomeDir, ".claude", "settings.json")
	t.MCP = filepath.Join(opts.HomeDir, ".claude.json")
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

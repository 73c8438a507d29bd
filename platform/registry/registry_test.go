package registry

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// contractNames are the platform names later issues build on (hook commands, install,
// filters, the index): a registered platform must use one of them.
var contractNames = []string{"claude-code", "codex", "gemini-cli", "antigravity", "opencode", "copilot",
	"qwen-code", "cursor", "windsurf", "goose", "roo-code", "warp"}

func TestBuiltinEntriesAreComplete(t *testing.T) {
	reg := Builtin()
	names := reg.Names()
	if len(names) == 0 || names[0] != "claude-code" {
		t.Fatalf("names = %v, want claude-code first", names)
	}
	for _, p := range reg.All() {
		if !slices.Contains(contractNames, p.Name) {
			t.Errorf("%s: not one of the contract names %v", p.Name, contractNames)
		}
		if p.Display == "" || p.Installer == nil {
			t.Errorf("%s: incomplete entry %+v", p.Name, p)
		}
		if len(p.Detect.HomePaths)+len(p.Detect.ConfigPaths)+len(p.Detect.Commands) == 0 {
			t.Errorf("%s: no Detect: `memnode install` without a platform could never offer it", p.Name)
		}
		if p.Adapter == nil {
			// MCP-only (goose, roo-code, warp): no hooks, no payloads to record, so no
			// fixtures; their context arrives through the context file.
			if p.ContextFile.Zero() || p.Fixtures != "" {
				t.Errorf("%s: an MCP-only platform needs a context file and no fixtures: %+v", p.Name, p)
			}
			continue
		}
		if got, ok := reg.Lookup(p.Name); !ok || got.Name != p.Name {
			t.Errorf("Lookup(%s) = %+v, %v", p.Name, got, ok)
		}
		for _, f := range []string{"README.md", "session.jsonl"} {
			if _, err := os.Stat(filepath.Join("..", "..", p.Fixtures, f)); err != nil {
				t.Errorf("%s: fixture %s: %v", p.Name, f, err)
			}
		}
	}
	if _, ok := reg.Lookup("vim"); ok {
		t.Error("Lookup found an unregistered platform")
	}
}

package registry

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
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

// TestHookupsFollowInstallAndUninstall installs every agent with its real installer into a
// fresh home: platform.Hookups sees hooks for each agent with an adapter, memnode's MCP server
// for every agent, no stale binary; after the binary is deleted each is stale; after
// uninstall nothing is left.
func TestHookupsFollowInstallAndUninstall(t *testing.T) {
	reg := Builtin()
	home := t.TempDir()
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"memnode", "memnode-hook"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: filepath.Join(bin, "memnode"),
		HookBinary: filepath.Join(bin, "memnode-hook")}
	for _, p := range reg.All() {
		if _, err := p.Installer.Install(opts); err != nil {
			t.Fatalf("install %s: %v", p.Name, err)
		}
	}
	got := map[string]platform.Hookup{}
	for _, h := range platform.Hookups(reg, opts) {
		got[h.Platform] = h
	}
	for _, p := range reg.All() {
		if _, lists := p.Installer.(platform.FileLister); !lists {
			continue
		}
		h, ok := got[p.Name]
		if !ok {
			t.Errorf("%s: installed, but Hookups does not see it", p.Name)
			continue
		}
		if want := p.Adapter != nil; h.Hooks != want {
			t.Errorf("%s: Hooks = %v, want %v", p.Name, h.Hooks, want)
		}
		if !h.MCP {
			t.Errorf("%s: memnode's MCP server is registered, Hookups says not", p.Name)
		}
		if len(h.Stale) != 0 {
			t.Errorf("%s: stale %v with the binaries in place", p.Name, h.Stale)
		}
	}
	if len(got) == 0 {
		t.Fatal("no agent's installer lists its files: the test proves nothing")
	}

	os.Remove(filepath.Join(bin, "memnode"))
	for _, h := range platform.Hookups(reg, opts) {
		if h.MCP && len(h.Stale) == 0 {
			t.Errorf("%s: its MCP server's binary is gone, Hookups reports nothing stale", h.Platform)
		}
	}

	for _, p := range reg.All() {
		if _, err := p.Installer.Uninstall(opts); err != nil {
			t.Fatalf("uninstall %s: %v", p.Name, err)
		}
	}
	if left := platform.Hookups(reg, opts); len(left) != 0 {
		t.Errorf("after uninstall: %+v", left)
	}
}

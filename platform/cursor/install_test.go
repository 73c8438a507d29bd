package cursor

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform/platformtest"
)

const bin = "/opt/memnode/bin/memnode"

// TestCursorInstallRoundTripKeepsTheUsersHooks: memnode's hooks land beside the user's in
// hooks.json and its server beside theirs in mcp.json; a second install changes nothing;
// uninstall gives back the original bytes of both files.
func TestCursorInstallRoundTripKeepsTheUsersHooks(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin, HookBinary: bin + "-hook"}
	hooksPath := filepath.Join(o.HomeDir, ".cursor", "hooks.json")
	mcpPath := filepath.Join(o.HomeDir, ".cursor", "mcp.json")
	origHooks := "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [{ \"command\": \"./hooks/format.sh\" }]\n  }\n}\n"
	origMCP := "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}}}"
	platformtest.WriteFile(t, hooksPath, origHooks, 0o644)
	platformtest.WriteFile(t, mcpPath, origMCP, 0o644)

	cs, err := Installer{}.Install(o)
	if err != nil || len(cs) != 2 || cs[0].Action != "updated" || cs[1].Action != "updated" {
		t.Fatalf("install: %v %v", cs, err)
	}
	h := platformtest.ReadJSON(t, hooksPath)
	if h["version"] != float64(1) {
		t.Errorf("version = %v", h["version"])
	}
	hooks := h["hooks"].(map[string]any)
	for _, spec := range HookSpecs() {
		entries, _ := hooks[spec.Event].([]any)
		found := false
		for _, e := range entries {
			m := e.(map[string]any)
			if m["command"] == bin+"-hook hook cursor "+spec.Sub && m["timeout"] == float64(spec.Timeout) {
				found = true
			}
		}
		if !found {
			t.Errorf("no memnode entry for %s: %v", spec.Event, entries)
		}
	}
	if edits := hooks["afterFileEdit"].([]any); len(edits) != 2 || edits[0].(map[string]any)["command"] != "./hooks/format.sh" {
		t.Errorf("the user's afterFileEdit hook must stay first: %v", edits)
	}
	servers := platformtest.ReadJSON(t, mcpPath)["mcpServers"].(map[string]any)
	if want := map[string]any{"command": bin, "args": []any{"mcp"}}; !reflect.DeepEqual(servers["memnode"], want) || servers["github"] == nil {
		t.Errorf("mcpServers = %v", servers)
	}

	installedHooks, _ := os.ReadFile(hooksPath)
	if cs, err := (Installer{}).Install(o); err != nil || cs[0].Action != "unchanged" || cs[1].Action != "unchanged" {
		t.Fatalf("second install: %v %v", cs, err)
	}
	if b, _ := os.ReadFile(hooksPath); string(b) != string(installedHooks) {
		t.Fatalf("second install rewrote hooks.json")
	}

	cs, err = Installer{}.Uninstall(o)
	if err != nil || cs[0].Action != "restored" || cs[1].Action != "restored" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	for path, orig := range map[string]string{hooksPath: origHooks, mcpPath: origMCP} {
		if b, _ := os.ReadFile(path); string(b) != orig {
			t.Errorf("%s after uninstall:\n%s\nwant\n%s", path, b, orig)
		}
		if _, err := os.Stat(path + ".memnode-backup"); !os.IsNotExist(err) {
			t.Errorf("backup of %s left behind", path)
		}
	}
}

// TestCursorInstallCreatesAndUninstallRemoves: with no Cursor files, install creates both
// (hooks.json with "version": 1) and uninstall removes both.
func TestCursorInstallCreatesAndUninstallRemoves(t *testing.T) {
	dir := t.TempDir()
	o := install.Options{Scope: install.ScopeProject, ProjectDir: dir, Binary: "memnode", HookBinary: "memnode-hook"}
	cs, err := Installer{}.Install(o)
	if err != nil || len(cs) != 2 || cs[0].Action != "created" || cs[1].Action != "created" {
		t.Fatalf("install: %v %v", cs, err)
	}
	hooksPath := filepath.Join(dir, ".cursor", "hooks.json")
	h := platformtest.ReadJSON(t, hooksPath)
	if h["version"] != float64(1) || h["hooks"].(map[string]any)["sessionStart"] == nil {
		t.Fatalf("hooks.json = %v", h)
	}
	if fi, _ := os.Stat(hooksPath); fi.Mode().Perm() != 0o644 {
		t.Errorf("project hooks.json mode %v, want 0644 (a file a team commits)", fi.Mode().Perm())
	}
	entry := h["hooks"].(map[string]any)["sessionStart"].([]any)[0].(map[string]any)
	if entry["command"] != "memnode-hook hook cursor context" {
		t.Errorf("project scope must name the command, not a path: %v", entry)
	}
	cs, err = Installer{}.Uninstall(o)
	if err != nil || cs[0].Action != "removed" || cs[1].Action != "removed" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	for _, p := range []string{hooksPath, filepath.Join(dir, ".cursor", "mcp.json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
}

// TestCursorReinstallMovesAStaleBinary: entries of an older binary path are replaced, not
// duplicated; the user's entries are never touched.
func TestCursorReinstallMovesAStaleBinary(t *testing.T) {
	home := t.TempDir()
	old := install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: "/old/memnode"}
	if _, err := (Installer{}).Install(old); err != nil {
		t.Fatal(err)
	}
	o := install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: bin}
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	hooks := platformtest.ReadJSON(t, filepath.Join(home, ".cursor", "hooks.json"))["hooks"].(map[string]any)
	for _, spec := range HookSpecs() {
		if n := len(hooks[spec.Event].([]any)); n != 1 {
			t.Errorf("%s has %d entries, want 1", spec.Event, n)
		}
	}
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor", "hooks.json")); !os.IsNotExist(err) {
		t.Errorf("hooks.json left behind")
	}
}

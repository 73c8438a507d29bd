package antigravity

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform/platformtest"
)

const bin = "/opt/memnode/bin/memnode"

// TestAntigravityInstallRoundTripKeepsTheUsersHooks: memnode's named hook lands beside the
// user's in ~/.gemini/config/hooks.json, in the shape agy loads (matcher groups for the tool
// events, bare handlers for the others), its server beside theirs in mcp_config.json; a
// second install changes nothing; uninstall gives back the original bytes of both files.
func TestAntigravityInstallRoundTripKeepsTheUsersHooks(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin, HookBinary: bin + "-hook"}
	hooksPath := filepath.Join(o.HomeDir, ".gemini", "config", "hooks.json")
	mcpPath := filepath.Join(o.HomeDir, ".gemini", "config", "mcp_config.json")
	origHooks := "{\n  \"lint\": {\n    \"PostToolUse\": [{\"matcher\": \"write_to_file\", \"hooks\": [{\"command\": \"./lint.sh\"}]}]\n  }\n}\n"
	origMCP := "{\"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}}}"
	platformtest.WriteFile(t, hooksPath, origHooks, 0o644)
	platformtest.WriteFile(t, mcpPath, origMCP, 0o644)

	cs, err := Installer{}.Install(o)
	if err != nil || len(cs) != 2 || cs[0].Action != "updated" || cs[1].Action != "updated" {
		t.Fatalf("install: %v %v", cs, err)
	}
	doc := platformtest.ReadJSON(t, hooksPath)
	if doc["lint"] == nil {
		t.Errorf("the user's hook is gone: %v", doc)
	}
	ours := doc["memnode"].(map[string]any)
	handler := func(sub string, timeout int) map[string]any {
		return map[string]any{"type": "command", "command": bin + "-hook hook antigravity " + sub, "timeout": float64(timeout)}
	}
	want := map[string]any{
		"PreInvocation": []any{handler("session-init", 30)},
		"PreToolUse":    []any{map[string]any{"matcher": "*", "hooks": []any{handler("observation", 30)}}},
		"PostToolUse":   []any{map[string]any{"matcher": "*", "hooks": []any{handler("observation", 30)}}},
		"Stop":          []any{handler("summarize", 60)},
	}
	if !reflect.DeepEqual(ours, want) {
		t.Errorf("memnode's hook =\n%v\nwant\n%v", ours, want)
	}
	servers := platformtest.ReadJSON(t, mcpPath)["mcpServers"].(map[string]any)
	if w := map[string]any{"command": bin, "args": []any{"mcp"}}; !reflect.DeepEqual(servers["memnode"], w) || servers["github"] == nil {
		t.Errorf("mcpServers = %v", servers)
	}

	installed, _ := os.ReadFile(hooksPath)
	if cs, err := (Installer{}).Install(o); err != nil || cs[0].Action != "unchanged" || cs[1].Action != "unchanged" {
		t.Fatalf("second install: %v %v", cs, err)
	}
	if b, _ := os.ReadFile(hooksPath); string(b) != string(installed) {
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

// TestAntigravityUninstallKeepsLaterUserChanges: a hook the user added after memnode's
// install survives uninstall; only memnode's entry goes.
func TestAntigravityUninstallKeepsLaterUserChanges(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin}
	hooksPath := filepath.Join(o.HomeDir, ".gemini", "config", "hooks.json")
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	doc := platformtest.ReadJSON(t, hooksPath)
	doc["audit"] = map[string]any{"Stop": []any{map[string]any{"command": "./audit.sh"}}}
	b, _ := json.MarshalIndent(doc, "", "  ")
	platformtest.WriteFile(t, hooksPath, string(b), 0o644)
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	after := platformtest.ReadJSON(t, hooksPath)
	if after["memnode"] != nil || after["audit"] == nil || len(after) != 1 {
		t.Errorf("after uninstall: %v, want only the user's audit hook", after)
	}
}

// TestAntigravityProjectScope: project scope writes .agents/hooks.json and
// .agents/mcp_config.json with bare command names (files a team commits), and uninstall
// removes what it created.
func TestAntigravityProjectScope(t *testing.T) {
	dir := t.TempDir()
	o := install.Options{Scope: install.ScopeProject, ProjectDir: dir, Binary: "memnode", HookBinary: "memnode-hook"}
	cs, err := Installer{}.Install(o)
	if err != nil || len(cs) != 2 || cs[0].Action != "created" || cs[1].Action != "created" {
		t.Fatalf("install: %v %v", cs, err)
	}
	hooksPath := filepath.Join(dir, ".agents", "hooks.json")
	stop := platformtest.ReadJSON(t, hooksPath)["memnode"].(map[string]any)["Stop"].([]any)[0].(map[string]any)
	if stop["command"] != "memnode-hook hook antigravity summarize" {
		t.Errorf("project scope must name the command, not a path: %v", stop)
	}
	if fi, _ := os.Stat(hooksPath); fi.Mode().Perm() != 0o644 {
		t.Errorf("project hooks.json mode %v, want 0644", fi.Mode().Perm())
	}
	cs, err = Installer{}.Uninstall(o)
	if err != nil || cs[0].Action != "removed" || cs[1].Action != "removed" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	for _, p := range []string{hooksPath, filepath.Join(dir, ".agents", "mcp_config.json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
}

// TestAntigravityInstallRefusesAForeignMemnodeEntry: a "memnode" key that is not a hook
// object is not overwritten.
func TestAntigravityInstallRefusesAForeignMemnodeEntry(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin}
	hooksPath := filepath.Join(o.HomeDir, ".gemini", "config", "hooks.json")
	platformtest.WriteFile(t, hooksPath, `{"memnode": "mine"}`, 0o644)
	if _, err := (Installer{}).Install(o); err == nil {
		t.Fatal("install overwrote a foreign memnode entry")
	}
	if b, _ := os.ReadFile(hooksPath); string(b) != `{"memnode": "mine"}` {
		t.Errorf("hooks.json changed: %s", b)
	}
}

package qwencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform/platformtest"
)

const bin = "/opt/memnode/bin/memnode"

// TestQwenCodeInstallRoundTrip: hooks (seconds) and the MCP server land in the one
// settings.json beside the user's keys; reinstall changes nothing; uninstall restores the
// original bytes.
func TestQwenCodeInstallRoundTrip(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin, HookBinary: "/opt/memnode/bin/memnode-hook"}
	settings := filepath.Join(o.HomeDir, ".qwen", "settings.json")
	orig := "{\n  \"security\": {\"auth\": {\"selectedType\": \"openai\"}},\n  \"model\": {\"name\": \"qwen3-coder\"}\n}\n"
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(settings)
	var s struct {
		Security any
		Hooks    map[string][]struct {
			Matcher string
			Hooks   []map[string]any
		}
		MCPServers map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Security == nil || len(s.Hooks) != 6 || len(s.Hooks["PostToolUse"]) != 1 || s.Hooks["PostToolUse"][0].Matcher != "*" { // one process per tool call
		t.Fatalf("settings: %s", b)
	}
	if h := s.Hooks["PostToolUseFailure"][0].Hooks[0]; h["command"] != "/opt/memnode/bin/memnode-hook hook qwen-code observation" || h["timeout"] != float64(120) {
		t.Fatalf("PostToolUseFailure hook = %v", h)
	}
	if want := map[string]any{"command": bin, "args": []any{"mcp"}}; !reflect.DeepEqual(s.MCPServers["memnode"], want) {
		t.Fatalf("mcpServers = %v", s.MCPServers)
	}
	if cs, err := (Installer{}).Install(o); err != nil || cs[0].Action != "unchanged" {
		t.Fatalf("reinstall: %v %v", cs, err)
	}
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(settings); string(b) != orig {
		t.Fatalf("not restored:\n%s", b)
	}
}

// qwenRewrite does to settings.json what Qwen Code's start does (seen with qwen 0.24.4): it
// adds "$version": 4 and writes the file again in its own layout.
func qwenRewrite(t *testing.T, path string) {
	t.Helper()
	m := platformtest.ReadJSON(t, path)
	m["$version"] = 4
	out, err := json.MarshalIndent(m, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestQwenCodeUninstallAfterQwenRewroteTheFile: Qwen Code migrated and re-wrote
// settings.json after install; uninstall still gives back the user's original bytes, since
// nothing but Qwen's own "$version" and layout changed. A change the user made is kept:
// then only memnode's entries go.
func TestQwenCodeUninstallAfterQwenRewroteTheFile(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin}
	settings := filepath.Join(o.HomeDir, ".qwen", "settings.json")
	orig := "{\"model\": {\"name\": \"qwen3-coder\"}, \"security\": {\"auth\": {\"selectedType\": \"openai\"}}}"
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	qwenRewrite(t, settings)
	cs, err := Installer{}.Uninstall(o)
	if err != nil || cs[0].Action != "restored" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	if b, _ := os.ReadFile(settings); string(b) != orig {
		t.Fatalf("not restored:\n%s\nwant\n%s", b, orig)
	}

	// Now the user changes the model while memnode is installed: that change stays.
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	qwenRewrite(t, settings)
	b, _ := os.ReadFile(settings)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["model"] = map[string]any{"name": "qwen3-max"}
	b, _ = json.MarshalIndent(m, "", "    ")
	if err := os.WriteFile(settings, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err = Installer{}.Uninstall(o)
	if err != nil || cs[0].Action != "updated" {
		t.Fatalf("uninstall after a user change: %v %v", cs, err)
	}
	var after map[string]any
	b, _ = os.ReadFile(settings)
	if err := json.Unmarshal(b, &after); err != nil {
		t.Fatal(err)
	}
	if after["hooks"] != nil || after["mcpServers"] != nil || after["model"].(map[string]any)["name"] != "qwen3-max" || after["$version"] != float64(4) {
		t.Errorf("after uninstall: %s", b)
	}
	if _, err := os.Stat(settings + ".memnode-backup"); !os.IsNotExist(err) {
		t.Error("backup left behind")
	}
}

// TestQwenCodeInstallUpgradesTheTwoHookLayout: an install from before registered a second
// PostToolUse hook (matcher ^read_file$, file-context) beside the observation hook;
// installing again leaves the observation hooks alone (one process per tool call), and
// uninstall gives settings.json its bytes back, after Qwen Code's own rewrite too.
func TestQwenCodeInstallUpgradesTheTwoHookLayout(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin, HookBinary: "/opt/memnode/bin/memnode-hook"}
	old := target(o)
	old.Hooks = slices.Insert(HookSpecs(), 2, install.HookSpec{Event: "PostToolUse", Matcher: "^read_file$", Sub: "file-context", Timeout: 60})
	b := platformtest.UpgradeDropsHook(t, Installer{}, o, old, "{\n  \"model\": {\"name\": \"qwen3-coder\"}\n}\n", "file-context", len(HookSpecs()),
		func() { qwenRewrite(t, old.Settings) })
	if strings.Contains(b, "read_file") || strings.Count(b, "hook qwen-code observation") != 2 { // PostToolUse, PostToolUseFailure
		t.Errorf("settings.json after the upgrade:\n%s", b)
	}
}

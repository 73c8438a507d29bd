package qwencode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/memnode/memnode/install"
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
	if s.Security == nil || len(s.Hooks) != 6 || len(s.Hooks["PostToolUse"]) != 2 || s.Hooks["PostToolUse"][0].Matcher != "^read_file$" {
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

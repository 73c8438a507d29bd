package geminicli

import (
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

func userOpts(t *testing.T) install.Options {
	t.Helper()
	return install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin}
}

// TestGeminiCLIInstallRoundTrip: hooks and MCP server land in the one settings.json next to
// the user's keys; a second install changes nothing; uninstall restores the original bytes.
func TestGeminiCLIInstallRoundTrip(t *testing.T) {
	o := userOpts(t)
	settings := filepath.Join(o.HomeDir, ".gemini", "settings.json")
	orig := "{\n    \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n    \"mcpServers\": {\"github\": {\"command\": \"gh-mcp\"}},\n    \"hooks\": {\"AfterAgent\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]}\n}"
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := Installer{}.Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Action != "updated" || cs[0].Path != settings {
		t.Fatalf("install: %v", cs)
	}
	s := platformtest.ReadJSON(t, settings)
	hooks := s["hooks"].(map[string]any)
	for _, ev := range []string{"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"} {
		if hooks[ev] == nil {
			t.Errorf("no %s hook", ev)
		}
	}
	after := hooks["AfterTool"].([]any)
	if len(after) != 1 || after[0].(map[string]any)["matcher"] != ".*" { // one process per tool call
		t.Fatalf("AfterTool = %v", after)
	}
	entry := after[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)
	if entry["command"] != bin+" hook gemini-cli observation" || entry["timeout"] != float64(120000) {
		t.Errorf("observation hook = %v", entry)
	}
	if n := len(hooks["AfterAgent"].([]any)); n != 2 {
		t.Errorf("the user's AfterAgent hook was not kept beside memnode's: %d groups", n)
	}
	servers := s["mcpServers"].(map[string]any)
	if want := map[string]any{"command": bin, "args": []any{"mcp"}}; !reflect.DeepEqual(servers["memnode"], want) || servers["github"] == nil {
		t.Errorf("mcpServers = %v", servers)
	}
	if s["security"] == nil {
		t.Error("the user's keys are gone")
	}
	installed, _ := os.ReadFile(settings)
	if cs, err := (Installer{}).Install(o); err != nil || cs[0].Action != "unchanged" {
		t.Fatalf("second install: %v %v", cs, err)
	}
	if again, _ := os.ReadFile(settings); string(again) != string(installed) {
		t.Fatal("a second install rewrote the file")
	}
	cs, err = Installer{}.Uninstall(o)
	if err != nil || len(cs) != 1 || cs[0].Action != "restored" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	if b, _ := os.ReadFile(settings); string(b) != orig {
		t.Fatalf("not byte-identical after uninstall:\n%s", b)
	}
	if _, err := os.Stat(settings + ".memnode-backup"); !os.IsNotExist(err) {
		t.Fatal("backup left behind")
	}
}

// TestGeminiCLIInstallFresh: with no settings file, install creates one (0600) and
// uninstall removes it again, and a user change in between survives uninstall.
func TestGeminiCLIInstallFresh(t *testing.T) {
	o := userOpts(t)
	settings := filepath.Join(o.HomeDir, ".gemini", "settings.json")
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(settings); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("created settings: %v %v", fi, err)
	}
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(settings); !os.IsNotExist(err) {
		t.Fatalf("settings left after uninstall: %v", err)
	}

	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(settings)
	changed := strings.Replace(string(b), "{", "{\n  \"theme\": \"dark\",", 1)
	if err := os.WriteFile(settings, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if s := platformtest.ReadJSON(t, settings); !reflect.DeepEqual(s, map[string]any{"theme": "dark"}) {
		t.Fatalf("after uninstall: %v", s)
	}
}

func TestGeminiCLIInstallProjectScope(t *testing.T) {
	o := install.Options{Scope: install.ScopeProject, ProjectDir: t.TempDir(), Binary: "memnode"}
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(o.ProjectDir, ".gemini", "settings.json")
	b, err := os.ReadFile(p)
	if err != nil || !strings.Contains(string(b), `"memnode hook gemini-cli context"`) {
		t.Fatalf("%s: %s %v", p, b, err)
	}
}

// TestGeminiCLIInstallUpgradesTheTwoHookLayout: an install from before registered a second
// AfterTool hook (matcher read_file, file-context) beside the observation hook; installing
// again leaves the observation hook alone (one process per tool call), and uninstall gives
// settings.json its bytes back.
func TestGeminiCLIInstallUpgradesTheTwoHookLayout(t *testing.T) {
	o := userOpts(t)
	old := target(o)
	old.Hooks = slices.Insert(HookSpecs(), 2, install.HookSpec{Event: "AfterTool", Matcher: "read_file", Sub: "file-context", Timeout: 60000})
	b := platformtest.UpgradeDropsHook(t, Installer{}, o, old, "{\n  \"theme\": \"dark\"\n}", "file-context", len(HookSpecs()), nil)
	if strings.Contains(b, `"read_file"`) || strings.Count(b, "hook gemini-cli observation") != 1 {
		t.Errorf("settings.json after the upgrade:\n%s", b)
	}
}

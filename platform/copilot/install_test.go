package copilot

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform/platformtest"
)

func TestInstallRoundTrip(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".copilot")
	settings := filepath.Join(dir, "settings.json")
	orig := "{\n    \"theme\": \"dark\"\n}"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: "/opt/m/memnode", HookBinary: "/opt/m/memnode-hook"}
	if _, err := (Installer{}).Install(opts); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(settings)
	for _, ev := range []string{"sessionStart", "userPromptSubmitted", "postToolUse", "postToolUseFailure", "agentStop", "sessionEnd"} {
		if !strings.Contains(string(b), `"`+ev+`"`) {
			t.Errorf("settings.json lacks %s:\n%s", ev, b)
		}
	}
	if !strings.Contains(string(b), `"bash": "/opt/m/memnode-hook hook copilot observation"`) || !strings.Contains(string(b), `"timeoutSec": 120`) {
		t.Errorf("hook entry shape:\n%s", b)
	}
	mcp, _ := os.ReadFile(filepath.Join(dir, "mcp-config.json"))
	if !strings.Contains(string(mcp), `"type": "local"`) || !strings.Contains(string(mcp), `"tools": [`) {
		t.Errorf("MCP entry:\n%s", mcp)
	}
	if _, err := (Installer{}).Uninstall(opts); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(settings); string(got) != orig {
		t.Fatalf("round trip: %q, want %q", got, orig)
	}
	if _, err := os.Stat(filepath.Join(dir, "mcp-config.json")); !os.IsNotExist(err) {
		t.Errorf("mcp-config.json that memnode created is left: %v", err)
	}
}

// TestInstallUpgradesTheTwoHookLayout: an install from before registered two postToolUse
// hooks (file-context and observation); installing again leaves the observation hook alone
// (one process per tool call), and uninstall gives settings.json its bytes back.
func TestInstallUpgradesTheTwoHookLayout(t *testing.T) {
	opts := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: "/opt/m/memnode", HookBinary: "/opt/m/memnode-hook"}
	old := target(opts)
	old.Hooks = slices.Insert(HookSpecs(), 2, install.HookSpec{Event: "postToolUse", Sub: "file-context", Timeout: 60})
	b := platformtest.UpgradeDropsHook(t, Installer{}, opts, old, "{\n  \"theme\": \"dark\"\n}", "file-context", len(HookSpecs()), nil)
	if strings.Count(b, "hook copilot observation") != 2 { // postToolUse, postToolUseFailure
		t.Errorf("settings.json after the upgrade:\n%s", b)
	}
}

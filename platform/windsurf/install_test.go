package windsurf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/install"
)

const bin = "/opt/memnode/bin/memnode"

// TestWindsurfInstallRoundTrip: hooks beside the user's in hooks.json, the server beside
// theirs in mcp_config.json; install twice = once; uninstall gives back both files' bytes;
// with no files before, uninstall removes what install created.
func TestWindsurfInstallRoundTrip(t *testing.T) {
	home := t.TempDir()
	o := install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: bin}
	dir := filepath.Join(home, ".codeium", "windsurf")
	hooksPath, mcpPath := filepath.Join(dir, "hooks.json"), filepath.Join(dir, "mcp_config.json")
	origHooks := "{\n  \"hooks\": {\n    \"post_write_code\": [\n      {\"command\": \"bash ~/fmt.sh\", \"show_output\": false}\n    ]\n  }\n}\n"
	origMCP := "{\"mcpServers\":{\"github\":{\"command\":\"gh-mcp\"}}}\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, s := range map[string]string{hooksPath: origHooks, mcpPath: origMCP} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if cs, err := (Installer{}).Install(o); err != nil || cs[0].Action != "updated" || cs[1].Action != "updated" {
		t.Fatalf("install: %v %v", cs, err)
	}
	b, _ := os.ReadFile(hooksPath)
	var doc struct {
		Hooks map[string][]map[string]any `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, spec := range HookSpecs() {
		es := doc.Hooks[spec.Event]
		if len(es) == 0 || es[len(es)-1]["command"] != bin+" hook windsurf "+spec.Sub || es[len(es)-1]["show_output"] != false {
			t.Errorf("%s: %v", spec.Event, es)
		}
	}
	if n := len(doc.Hooks["post_write_code"]); n != 2 {
		t.Errorf("post_write_code has %d entries, want the user's and memnode's", n)
	}
	if _, ok := doc.Hooks["version"]; ok {
		t.Error("Windsurf's hooks.json has no version key")
	}
	if cs, err := (Installer{}).Install(o); err != nil || cs[0].Action != "unchanged" || cs[1].Action != "unchanged" {
		t.Fatalf("second install: %v %v", cs, err)
	}
	if cs, err := (Installer{}).Uninstall(o); err != nil || cs[0].Action != "restored" || cs[1].Action != "restored" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	for p, s := range map[string]string{hooksPath: origHooks, mcpPath: origMCP} {
		if b, _ := os.ReadFile(p); string(b) != s {
			t.Errorf("%s after uninstall:\n%s\nwant\n%s", p, b, s)
		}
	}

	fresh := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin}
	if cs, err := (Installer{}).Install(fresh); err != nil || cs[0].Action != "created" {
		t.Fatalf("fresh install: %v %v", cs, err)
	}
	if cs, err := (Installer{}).Uninstall(fresh); err != nil || cs[0].Action != "removed" || cs[1].Action != "removed" {
		t.Fatalf("fresh uninstall: %v %v", cs, err)
	}
}

package mcponly

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

const bin = "/opt/mem node/bin/memnode"

func TestGooseInstallRoundTrip(t *testing.T) {
	home := t.TempDir()
	path := GooseConfig(filepath.Join(home, ".config"))
	orig := "GOOSE_PROVIDER: anthropic\nextensions:\n  developer:\n    enabled: true\n    name: developer\n    type: builtin\n  github:\n    args:\n    - -y\n    - '@modelcontextprotocol/server-github'\n    cmd: npx\n    enabled: true\n    type: stdio\nGOOSE_MODE: smart_approve\n"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	o := install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: bin}
	cs, err := gooseInstaller{}.Install(o)
	if err != nil || cs[0].Action != "updated" {
		t.Fatalf("install: %v %v", cs, err)
	}
	b, _ := os.ReadFile(path)
	s := string(b)
	for _, want := range []string{"extensions:\n  memnode:\n    enabled: true\n    type: stdio\n", `    cmd: "` + bin + `"`, "    args:\n    - mcp\n", "  developer:\n", "GOOSE_MODE: smart_approve\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("config lacks %q:\n%s", want, s)
		}
	}
	if cs, err := (gooseInstaller{}).Install(o); err != nil || cs[0].Action != "unchanged" {
		t.Fatalf("second install: %v %v", cs, err)
	}
	if cs, err := (gooseInstaller{}).Uninstall(o); err != nil || cs[0].Action != "updated" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Fatalf("after uninstall:\n%s\nwant\n%s", b, orig)
	}
	// Goose re-saved the file with memnode's entry moved last: uninstall still finds it.
	resaved := orig[:strings.Index(orig, "GOOSE_MODE")] + strings.TrimSuffix(gooseBlock(bin), "\n") + "\nGOOSE_MODE: smart_approve\n"
	if err := os.WriteFile(path, []byte(resaved), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (gooseInstaller{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != orig {
		t.Fatalf("after uninstall of a re-saved file:\n%s\nwant\n%s", b, orig)
	}
}

func TestGooseFreshInstallAndFlowStyle(t *testing.T) {
	home := t.TempDir()
	o := install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: bin}
	if cs, err := (gooseInstaller{}).Install(o); err != nil || cs[0].Action != "created" {
		t.Fatalf("install: %v %v", cs, err)
	}
	if cs, err := (gooseInstaller{}).Uninstall(o); err != nil || cs[0].Action != "removed" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	if _, err := os.Stat(GooseConfig(filepath.Join(home, ".config"))); !os.IsNotExist(err) {
		t.Fatalf("config left behind: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(GooseConfig(filepath.Join(home, ".config"))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(GooseConfig(filepath.Join(home, ".config")), []byte("extensions: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := (gooseInstaller{}).Install(o); !errors.Is(err, ErrGooseConfig) {
		t.Fatalf("flow-style extensions: %v, want ErrGooseConfig", err)
	}
	if b, _ := os.ReadFile(GooseConfig(filepath.Join(home, ".config"))); string(b) != "extensions: {}\n" {
		t.Fatalf("file touched: %q", b)
	}
}

func TestRooCodeInstallRoundTrip(t *testing.T) {
	dir := t.TempDir()
	o := install.Options{Scope: install.ScopeProject, ProjectDir: dir, Binary: "memnode"}
	cs, err := rooInstaller{}.Install(o)
	path := filepath.Join(dir, ".roo", "mcp.json")
	if err != nil || len(cs) != 1 || cs[0].Action != "created" || cs[0].Path != path {
		t.Fatalf("install: %v %v", cs, err)
	}
	var doc struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil || doc.MCPServers["memnode"]["command"] != "memnode" || doc.MCPServers["memnode"]["disabled"] != false {
		t.Fatalf("mcp.json = %s (%v)", b, err)
	}
	if cs, err := (rooInstaller{}).Install(o); err != nil || cs[0].Action != "unchanged" {
		t.Fatalf("second install: %v %v", cs, err)
	}
	if cs, err := (rooInstaller{}).Uninstall(o); err != nil || cs[0].Action != "removed" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	home := t.TempDir()
	u := install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: bin}
	if cs, err := (rooInstaller{}).Install(u); err != nil || cs[0].Path != RooSettings(filepath.Join(home, ".config")) {
		t.Fatalf("user install: %v %v", cs, err)
	}
}

func TestWarpInstallNamesTheEntryToPaste(t *testing.T) {
	cs, err := warpInstaller{}.Install(install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: "/usr/bin/memnode"})
	if err != nil || len(cs) != 1 || !strings.Contains(cs[0].Detail, `{"memnode":{"args":["mcp"],"command":"/usr/bin/memnode","start_on_launch":true}}`) {
		t.Fatalf("install: %v %v", cs, err)
	}
}

func TestPlatformsHaveContextFilesAndNoHooks(t *testing.T) {
	for _, p := range []struct {
		name, file string
		adapter    bool
	}{{GoosePlatform().Name, GoosePlatform().ContextFile.Path, GoosePlatform().Adapter != nil},
		{RooCodePlatform().Name, RooCodePlatform().ContextFile.Path, RooCodePlatform().Adapter != nil},
		{WarpPlatform().Name, WarpPlatform().ContextFile.Path, WarpPlatform().Adapter != nil}} {
		if p.file == "" || p.adapter {
			t.Errorf("%s: context file %q, adapter %v", p.name, p.file, p.adapter)
		}
	}
}

// TestGooseAndRooHonourXDGConfigHome: Goose (etcetera's Xdg strategy) and VS Code on Linux
// (Roo Code's settings live in its user data) read below $XDG_CONFIG_HOME when it is set,
// so with ConfigHome the user-scope install and uninstall go there, nothing is written
// under ~/.config, and detection looks there; a relative config directory is refused.
func TestGooseAndRooHonourXDGConfigHome(t *testing.T) {
	for _, tc := range []struct {
		name string
		inst interface {
			Install(install.Options) ([]install.Change, error)
			Uninstall(install.Options) ([]install.Change, error)
		}
		path   func(string) string
		detect platform.Detect
	}{
		{"goose", gooseInstaller{}, GooseConfig, GoosePlatform().Detect},
		{"roo-code", rooInstaller{}, RooSettings, RooCodePlatform().Detect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), ConfigHome: filepath.Join(t.TempDir(), "xdg"), Binary: bin}
			want := tc.path(o.ConfigHome)
			cs, err := tc.inst.Install(o)
			if err != nil || len(cs) != 1 || cs[0].Action != "created" || cs[0].Path != want {
				t.Fatalf("install: %v %v, want %s created", cs, err, want)
			}
			if b, err := os.ReadFile(want); err != nil || !strings.Contains(string(b), `"`+bin+`"`) {
				t.Fatalf("%s: %v\n%s", want, err, b)
			}
			if _, err := os.Stat(filepath.Join(o.HomeDir, ".config")); !os.IsNotExist(err) {
				t.Fatalf("~/.config written although XDG_CONFIG_HOME is set: %v", err)
			}
			if why, ok := tc.detect.Found(o.HomeDir, o.ConfigHome, func(string) (string, error) { return "", os.ErrNotExist }); !ok || !strings.HasPrefix(why, o.ConfigHome) {
				t.Fatalf("not detected below XDG_CONFIG_HOME: %q %v", why, ok)
			}
			if cs, err := tc.inst.Uninstall(o); err != nil || cs[0].Path != want || cs[0].Action != "removed" {
				t.Fatalf("uninstall: %v %v", cs, err)
			}
			if _, err := os.Stat(want); !os.IsNotExist(err) {
				t.Fatalf("%s left after uninstall: %v", want, err)
			}
			rel := o
			rel.ConfigHome = "xdg"
			if _, err := tc.inst.Install(rel); !errors.Is(err, install.ErrBadOption) {
				t.Fatalf("relative config home: %v, want ErrBadOption", err)
			}
		})
	}
}

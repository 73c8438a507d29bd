package codex

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/install"
)

func TestTableName(t *testing.T) {
	for line, want := range map[string][]string{
		"[mcp_servers.memnode]":                         {"mcp_servers", "memnode"},
		` [ mcp_servers . "memnode" ] # mine`:           {"mcp_servers", "memnode"},
		`[hooks.state."/h/.codex/hooks.json:stop:0:0"]`: {"hooks", "state", "/h/.codex/hooks.json:stop:0:0"},
		"[[profiles.x]]":                                {"profiles", "x"},
	} {
		got, ok := tableName(line)
		if !ok || !slices.Equal(got, want) {
			t.Errorf("tableName(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
	for _, line := range []string{`model = "[x]"`, `["unterminated]`, "# [x]"} {
		if got, ok := tableName(line); ok {
			t.Errorf("tableName(%q) = %q, want no header", line, got)
		}
	}
}

func TestRemoveTablesKeepsMultilineStrings(t *testing.T) {
	text := "a = 1\n\n[x]\nb = \"\"\"\n[mcp_servers.memnode]\n\"\"\"\n\n[mcp_servers.memnode]\ncommand = \"m\"\n\n[y]\nc = 2\n"
	got, ok := removeTables(text, isMCPTable)
	if !ok || got != "a = 1\n\n[x]\nb = \"\"\"\n[mcp_servers.memnode]\n\"\"\"\n\n[y]\nc = 2\n" {
		t.Fatalf("removeTables: %v %q", ok, got)
	}
}

func opts(home string) install.Options {
	return install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: "/opt/memnode/memnode", HookBinary: "/opt/memnode/memnode-hook"}
}

// TestInstallRoundTripIsByteExact: install, Codex's own trust entries (what `codex
// app-server` writes), uninstall → the user's config.toml is back byte for byte.
func TestInstallRoundTripIsByteExact(t *testing.T) {
	home := t.TempDir()
	config := filepath.Join(home, ".codex", "config.toml")
	orig := "model = \"gpt-5.5\"\n# mine\n[projects.\"/w\"]\ntrust_level = \"trusted\"" // no final newline
	if err := os.MkdirAll(filepath.Dir(config), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	inst := Installer{Codex: filepath.Join(home, "no-codex-here")}
	changes, err := inst.Install(opts(home))
	if err != nil {
		t.Fatal(err)
	}
	if last := changes[len(changes)-1]; !strings.Contains(last.Detail, "hooks not trusted yet") {
		t.Errorf("trust step without codex: %v", last)
	}
	b, _ := os.ReadFile(config)
	if !strings.HasPrefix(string(b), orig+"\n\n") || !strings.Contains(string(b), "[mcp_servers.memnode]\ncommand = \"/opt/memnode/memnode\"\nargs = [\"mcp\"]\n") {
		t.Fatalf("config.toml after install:\n%s", b)
	}
	hooks, _ := os.ReadFile(filepath.Join(home, ".codex", "hooks.json"))
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"} {
		if !strings.Contains(string(hooks), `"`+ev+`"`) {
			t.Errorf("hooks.json lacks %s:\n%s", ev, hooks)
		}
	}
	if again, err := inst.Install(opts(home)); err != nil || again[0].Action != "unchanged" || again[1].Action != "unchanged" {
		t.Fatalf("second install: %v %v", again, err)
	}
	// What `codex app-server` config/batchWrite appends for the trusted hooks.
	keys, err := trustKeys(filepath.Join(home, ".codex", "hooks.json"))
	if err != nil || len(keys) != len(HookSpecs()) {
		t.Fatalf("trust keys %v, %v", keys, err)
	}
	trust := "\n[hooks.state]\n"
	for k := range keys {
		trust += "\n[hooks.state." + tomlString(k) + "]\ntrusted_hash = \"sha256:00\"\n"
	}
	trust += "\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:11\"\n"
	b, _ = os.ReadFile(config)
	if err := os.WriteFile(config, append(b, trust...), 0o640); err != nil {
		t.Fatal(err)
	}

	if _, err := inst.Uninstall(opts(home)); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(config)
	want := orig + "\n\n[hooks.state]\n\n[hooks.state.\"/elsewhere/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:11\"\n"
	if string(got) != want {
		t.Fatalf("uninstall with another trusted hook left:\n%q\nwant\n%q", got, want)
	}

	// Without the other trust entry, the original bytes come back.
	if err := os.WriteFile(config, []byte(orig), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Install(opts(home)); err != nil {
		t.Fatal(err)
	}
	if _, err := inst.Uninstall(opts(home)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(config); string(got) != orig {
		t.Fatalf("round trip: %q, want %q", got, orig)
	}
	if fi, _ := os.Stat(config); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	for _, p := range []string{filepath.Join(home, ".codex", "hooks.json"), config + backupSuffix} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
}

func TestUninstallWithoutConfigIsANoop(t *testing.T) {
	home := t.TempDir()
	changes, err := Installer{}.Uninstall(opts(home))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		if c.Action != "absent" && c.Action != "unchanged" {
			t.Errorf("uninstall of nothing: %v", c)
		}
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("uninstall created files: %v", entries)
	}
}

func FuzzTables(f *testing.F) {
	f.Add("a = 1\n[mcp_servers.memnode]\ncommand = \"x\"\n[b]\n")
	f.Add("s = '''\n[x]\n'''\n[y]\n")
	f.Fuzz(func(t *testing.T, text string) {
		rest, removed := removeTables(text, isMCPTable)
		if !removed && rest != text {
			t.Fatalf("nothing removed but text changed")
		}
		if len(rest) > len(text) {
			t.Fatalf("removal grew the text")
		}
	})
}

// TestInstallUpgradesTheTwoHookLayout: an install from before registered a second
// PostToolUse hook (matcher Bash, file-context) beside the observation hook, and Codex
// trusted both. Installing again leaves one PostToolUse hook (one process per tool call),
// drops the trust entry of the position memnode no longer holds, and uninstall still gives
// config.toml its bytes back.
func TestInstallUpgradesTheTwoHookLayout(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".codex")
	config, hooksFile := filepath.Join(dir, "config.toml"), filepath.Join(dir, "hooks.json")
	orig := "model = \"gpt-5.5\"\n"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	old := slices.Insert(HookSpecs(), 2, install.HookSpec{Event: "PostToolUse", Matcher: "Bash", Sub: "file-context", Timeout: 60})
	if _, err := install.Install(install.Target{Platform: Name, Settings: hooksFile, Hooks: old, NewMode: 0o600}, opts(home)); err != nil {
		t.Fatal(err)
	}
	if _, err := installMCP(config, opts(home)); err != nil {
		t.Fatal(err)
	}
	oldKeys, err := trustKeys(hooksFile)
	if err != nil || len(oldKeys) != len(old) {
		t.Fatalf("old trust keys %v, %v", oldKeys, err)
	}
	trust := "\n[hooks.state]\n"
	for k := range oldKeys {
		trust += "\n[hooks.state." + tomlString(k) + "]\ntrusted_hash = \"sha256:00\"\n"
	}
	b, _ := os.ReadFile(config)
	if err := os.WriteFile(config, append(b, trust...), 0o600); err != nil {
		t.Fatal(err)
	}

	inst := Installer{Codex: filepath.Join(home, "no-codex-here")}
	if _, err := inst.Install(opts(home)); err != nil {
		t.Fatal(err)
	}
	hooks, _ := os.ReadFile(hooksFile)
	if n := strings.Count(string(hooks), " hook codex "); n != len(HookSpecs()) {
		t.Errorf("hooks.json has %d memnode hooks, want %d:\n%s", n, len(HookSpecs()), hooks)
	}
	if strings.Contains(string(hooks), "file-context") || strings.Count(string(hooks), "hook codex observation") != 1 {
		t.Errorf("hooks.json keeps a second PostToolUse hook:\n%s", hooks)
	}
	newKeys, _ := trustKeys(hooksFile)
	b, _ = os.ReadFile(config)
	for k := range oldKeys {
		if in := strings.Contains(string(b), tomlString(k)); in != newKeys[k] {
			t.Errorf("trust entry %s in config.toml: %v, want %v:\n%s", k, in, newKeys[k], b)
		}
	}

	if _, err := inst.Uninstall(opts(home)); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(config); string(got) != orig {
		t.Fatalf("uninstall after the upgrade left:\n%q\nwant\n%q", got, orig)
	}
	if _, err := os.Stat(hooksFile); !os.IsNotExist(err) {
		t.Errorf("hooks.json left behind: %v", err)
	}
}

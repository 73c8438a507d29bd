package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform/registry"
)

// runCLI runs the CLI in-process with HOME=home and PATH=path.
func runCLI(t *testing.T, home string, stdin string, args ...string) (string, int) {
	t.Helper()
	env := map[string]string{"HOME": home, "MEMNODE_DATA_DIR": filepath.Join(home, ".memnode")}
	var out, errb bytes.Buffer
	code := runMain(context.Background(), args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	if errb.Len() > 0 {
		t.Logf("stderr: %s", errb.String())
	}
	return out.String(), code
}

// TestInstallWithoutPlatformDetectsAgents: `memnode install` lists the agents it finds
// (home directories, commands in PATH) and, with no terminal to ask on, installs nothing and
// exits 1 saying to use --yes; `--yes` installs
// into exactly those; a second run changes nothing; uninstall removes each again.
func TestInstallWithoutPlatformDetectsAgents(t *testing.T) {
	home := t.TempDir()
	bin := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PATH", bin)
	for _, d := range []string{".cursor", ".codeium/windsurf"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "goose"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	out, code := runCLI(t, home, "", "install")
	if code != 1 {
		t.Fatalf("install without a terminal: exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"cursor", "~/.cursor", "windsurf", "~/.codeium/windsurf", "goose", "goose in PATH"} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "claude-code") || strings.Contains(out, "roo-code") {
		t.Errorf("listed an agent that is not here:\n%s", out)
	}
	cursorHooks := filepath.Join(home, ".cursor", "hooks.json")
	if _, err := os.Stat(cursorHooks); !os.IsNotExist(err) {
		t.Fatalf("install without --yes wrote %s", cursorHooks)
	}

	out, code = runCLI(t, home, "", "install", "--yes")
	if code != 0 {
		t.Fatalf("install --yes: exit %d\n%s", code, out)
	}
	for _, p := range []string{cursorHooks, filepath.Join(home, ".codeium", "windsurf", "hooks.json"), filepath.Join(home, ".config", "goose", "config.yaml")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("install --yes did not write %s: %v", p, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".claude")); !os.IsNotExist(err) {
		t.Errorf("installed into Claude Code, which is not here")
	}

	out, _ = runCLI(t, home, "", "install", "--yes")
	if strings.Contains(out, "updated") || strings.Contains(out, "created") {
		t.Errorf("second install --yes changed files:\n%s", out)
	}
	for _, name := range []string{"cursor", "windsurf", "goose"} {
		if _, code := runCLI(t, home, "", "uninstall", name); code != 0 {
			t.Fatalf("uninstall %s: exit %d", name, code)
		}
	}
	for _, p := range []string{cursorHooks, filepath.Join(home, ".config", "goose", "config.yaml")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s left behind by uninstall", p)
		}
	}
}

func TestInstallWithoutPlatformFindsNothing(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PATH", t.TempDir())
	out, code := runCLI(t, home, "", "install")
	if code != 0 || !strings.Contains(out, "no coding agent found") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// TestDetectAgentsFromRegistry: every agent is found by what its registry entry declares,
// from its home directory alone or from its command in PATH alone.
func TestDetectAgentsFromRegistry(t *testing.T) {
	reg := registry.Builtin()
	for _, p := range reg.All() {
		for _, dir := range p.Detect.HomePaths {
			home := t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, filepath.FromSlash(dir)), 0o755); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(detectAgents(reg, home, "", noCommands), func(d detected) bool { return d.p.Name == p.Name }) {
				t.Errorf("%s: not detected from ~/%s", p.Name, dir)
			}
		}
		for _, dir := range p.Detect.ConfigPaths {
			home, xdg := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(home, ".config", filepath.FromSlash(dir)), 0o755); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(detectAgents(reg, home, "", noCommands), func(d detected) bool { return d.p.Name == p.Name }) {
				t.Errorf("%s: not detected from ~/.config/%s", p.Name, dir)
			}
			// With XDG_CONFIG_HOME set the agent reads its config there, not in ~/.config.
			if slices.ContainsFunc(detectAgents(reg, home, xdg, noCommands), func(d detected) bool { return d.p.Name == p.Name }) {
				t.Errorf("%s: detected from ~/.config/%s although XDG_CONFIG_HOME is elsewhere", p.Name, dir)
			}
			if err := os.MkdirAll(filepath.Join(xdg, filepath.FromSlash(dir)), 0o755); err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(xdg, filepath.FromSlash(dir))
			if !slices.ContainsFunc(detectAgents(reg, home, xdg, noCommands), func(d detected) bool { return d.p.Name == p.Name && d.why == want }) {
				t.Errorf("%s: not detected from %s", p.Name, want)
			}
		}
		for _, cmd := range p.Detect.Commands {
			lookPath := func(c string) (string, error) {
				if c == cmd {
					return "/usr/bin/" + c, nil
				}
				return "", exec.ErrNotFound
			}
			found := detectAgents(reg, t.TempDir(), "", lookPath)
			if !slices.ContainsFunc(found, func(d detected) bool { return d.p.Name == p.Name && d.why == cmd+" in PATH" }) {
				t.Errorf("%s: not detected from %s in PATH", p.Name, cmd)
			}
		}
	}
	if found := detectAgents(reg, t.TempDir(), "", noCommands); len(found) != 0 {
		t.Errorf("detected agents on an empty machine: %v", found)
	}
}

func noCommands(string) (string, error) { return "", exec.ErrNotFound }

// TestInstallOpenCodeHonoursXDGConfigHome: `memnode install opencode` with XDG_CONFIG_HOME
// set writes where OpenCode reads ($XDG_CONFIG_HOME/opencode), `memnode install` finds
// OpenCode there, and uninstall removes memnode from there.
func TestInstallOpenCodeHonoursXDGConfigHome(t *testing.T) {
	home, xdg := t.TempDir(), filepath.Join(t.TempDir(), "xdg")
	t.Setenv("PATH", t.TempDir())
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": xdg, "MEMNODE_DATA_DIR": filepath.Join(home, ".memnode")}
	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if code := runMain(context.Background(), args, strings.NewReader(""), &out, &errb, func(k string) string { return env[k] }); code != 0 {
			t.Fatalf("memnode %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
		}
		return out.String()
	}
	run("install", "opencode")
	config := filepath.Join(xdg, "opencode", "opencode.json")
	if b, err := os.ReadFile(config); err != nil || !strings.Contains(string(b), `"memnode"`) {
		t.Fatalf("%s: %v\n%s", config, err, b)
	}
	if _, err := os.Stat(filepath.Join(home, ".config")); !os.IsNotExist(err) {
		t.Fatalf("~/.config written although XDG_CONFIG_HOME is set: %v", err)
	}
	var listing bytes.Buffer // without a terminal: the listing, exit 1 (nothing asked)
	runMain(context.Background(), []string{"install"}, strings.NewReader(""), &listing, io.Discard, func(k string) string { return env[k] })
	if out := listing.String(); !strings.Contains(out, "opencode") || !strings.Contains(out, filepath.Join(xdg, "opencode")) {
		t.Fatalf("install did not detect OpenCode in XDG_CONFIG_HOME:\n%s", out)
	}
	run("uninstall", "opencode")
	if _, err := os.Stat(filepath.Join(xdg, "opencode", "plugin", "memnode.js")); !os.IsNotExist(err) {
		t.Fatalf("plugin left after uninstall: %v", err)
	}
}

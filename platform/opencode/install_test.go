package opencode

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memnode/memnode/install"
)

const bin = "/opt/memnode/bin/memnode"

// TestOpenCodeInstallRoundTrip: the plugin file and the MCP entry under "mcp" are added
// beside the user's config, a second install changes nothing, uninstall restores the config
// byte for byte and removes the plugin.
func TestOpenCodeInstallRoundTrip(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), Binary: bin, HookBinary: "/opt/memnode/bin/memnode-hook"}
	dir := filepath.Join(o.HomeDir, ".config", "opencode")
	config := filepath.Join(dir, "opencode.json")
	orig := "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {\"github\": {\"type\": \"remote\", \"url\": \"https://x\"}}\n}\n"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	cs, err := Installer{}.Install(o)
	if err != nil || len(cs) != 2 || cs[1].Action != "created" {
		t.Fatalf("install: %v %v", cs, err)
	}
	var c struct{ MCP map[string]any }
	b, _ := os.ReadFile(config)
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"type": "local", "command": []any{bin, "mcp"}, "enabled": true}
	if !reflect.DeepEqual(c.MCP["memnode"], want) || c.MCP["github"] == nil {
		t.Fatalf("mcp = %v", c.MCP)
	}
	plugin, err := os.ReadFile(filepath.Join(dir, "plugin", "memnode.js"))
	if err != nil || !strings.Contains(string(plugin), `const HOOK = "/opt/memnode/bin/memnode-hook"`) {
		t.Fatalf("plugin: %v\n%s", err, plugin)
	}
	if strings.Contains(string(plugin), "token") && !strings.Contains(string(plugin), "the token it reads itself") {
		t.Fatal("the plugin must not carry a token")
	}
	if cs, err := (Installer{}).Install(o); err != nil || cs[0].Action != "unchanged" || cs[1].Action != "unchanged" {
		t.Fatalf("reinstall: %v %v", cs, err)
	}
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(config); string(b) != orig {
		t.Fatalf("config not restored:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "plugin")); !os.IsNotExist(err) {
		t.Fatalf("plugin folder left: %v", err)
	}
}

// TestOpenCodeUserScopeHonoursXDGConfigHome: with XDG_CONFIG_HOME set (ConfigHome),
// OpenCode reads $XDG_CONFIG_HOME/opencode, so the plugin and the MCP entry go there and
// nothing is written under ~/.config; uninstall removes them from there again. A relative
// ConfigHome is refused before anything is written.
func TestOpenCodeUserScopeHonoursXDGConfigHome(t *testing.T) {
	o := install.Options{Scope: install.ScopeUser, HomeDir: t.TempDir(), ConfigHome: filepath.Join(t.TempDir(), "xdg"), Binary: bin}
	dir := filepath.Join(o.ConfigHome, "opencode")
	cs, err := Installer{}.Install(o)
	if err != nil || len(cs) != 2 {
		t.Fatalf("install: %v %v", cs, err)
	}
	if cs[0].Path != filepath.Join(dir, "opencode.json") || cs[1].Path != filepath.Join(dir, "plugin", "memnode.js") {
		t.Fatalf("installed into %s and %s, want below %s", cs[0].Path, cs[1].Path, dir)
	}
	var c struct{ MCP map[string]any }
	b, err := os.ReadFile(filepath.Join(dir, "opencode.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &c); err != nil || c.MCP["memnode"] == nil {
		t.Fatalf("opencode.json: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "plugin", "memnode.js")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(o.HomeDir, ".config")); !os.IsNotExist(err) {
		t.Fatalf("~/.config written although XDG_CONFIG_HOME is set: %v", err)
	}
	cs, err = Installer{}.Uninstall(o)
	if err != nil || len(cs) != 2 || cs[1].Action != "removed" {
		t.Fatalf("uninstall: %v %v", cs, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "plugin")); !os.IsNotExist(err) {
		t.Fatalf("plugin folder left: %v", err)
	}

	rel := o
	rel.ConfigHome = "xdg"
	if _, err := (Installer{}).Install(rel); !errors.Is(err, install.ErrBadOption) {
		t.Fatalf("relative config home: %v, want ErrBadOption", err)
	}
}

func TestOpenCodeKeepsAForeignPlugin(t *testing.T) {
	o := install.Options{Scope: install.ScopeProject, ProjectDir: t.TempDir(), Binary: "memnode"}
	path := filepath.Join(o.ProjectDir, ".opencode", "plugin", "memnode.js")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("export const Mine = async () => ({})\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := (Installer{}).Install(o); err == nil {
		t.Fatal("install overwrote someone else's plugin")
	}
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "Mine") {
		t.Fatal("uninstall removed someone else's plugin")
	}
}

// TestOpenCodePluginRunsInNode loads the rendered plugin in node with a fake hook binary
// and drives its hooks as OpenCode does: each reaches the hook with OpenCode's arguments,
// the context is asked once per session and pushed onto the system prompt (not the title
// generator's), and a failing hook binary never throws into OpenCode.
func TestOpenCodePluginRunsInNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("MEMNODE_CI") == "1" {
			t.Fatalf("node is needed (install Node.js): %v", err)
		}
		t.Skipf("node is needed to run the plugin (install Node.js): %v", err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	hook := filepath.Join(dir, "hook")
	script := "#!/bin/sh\n{ printf '%s ' \"$3\"; cat; echo; } >> '" + log + "'\nprintf '{\"additionalContext\":\"CTX-for-%s\"}' \"$3\"\n"
	if err := os.WriteFile(hook, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	js, err := plugin(hook)
	if err != nil {
		t.Fatal(err)
	}
	pluginPath := filepath.Join(dir, "memnode.mjs")
	if err := os.WriteFile(pluginPath, js, 0o644); err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(dir, "driver.mjs")
	if err := os.WriteFile(driver, []byte(`
import { MemnodePlugin } from "./memnode.mjs"
const client = { session: { messages: async () => ({ data: [
  { info: { role: "user" }, parts: [{ type: "text", text: "q" }] },
  { info: { role: "assistant" }, parts: [{ type: "text", text: "All fixed." }, { type: "tool" }] } ] }) } }
const p = await MemnodePlugin({ directory: "/proj", worktree: "/proj", client })
const title = { system: ["You are a title generator. You output ONLY a thread title."] }
await p["experimental.chat.system.transform"]({ sessionID: "s1" }, title)
const a = { system: ["You are opencode."] }, b = { system: ["You are opencode."] }
await p["experimental.chat.system.transform"]({ sessionID: "s1" }, a)
await p["experimental.chat.system.transform"]({ sessionID: "s1" }, b)
await p["chat.message"]({ sessionID: "s1" }, { parts: [{ type: "text", text: "fix it" }] })
await p["tool.execute.after"]({ tool: "bash", sessionID: "s1", callID: "c1", args: { command: "ls" } }, { output: "x", metadata: { exit: 0 } })
await p.event({ event: { type: "message.part.updated", properties: { part: { type: "text", text: "hi" } } } })
await p.event({ event: { type: "session.idle", properties: { sessionID: "s1" } } })
console.log(JSON.stringify({ title: title.system.length, a: a.system, b: b.system }))
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, driver).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got struct {
		Title int
		A, B  []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("driver output %q: %v", out, err)
	}
	if got.Title != 1 || !reflect.DeepEqual(got.A, []string{"You are opencode.", "CTX-for-context"}) || !reflect.DeepEqual(got.A, got.B) {
		t.Fatalf("system prompts: %+v", got)
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	var events []string
	for _, l := range lines {
		ev, payload, _ := strings.Cut(l, " ")
		events = append(events, ev)
		var p map[string]any
		if err := json.Unmarshal([]byte(payload), &p); err != nil || p["cwd"] != "/proj" {
			t.Errorf("%s payload %q: %v", ev, payload, err)
		}
		in, err := Adapter{}.Normalize(ev, []byte(payload))
		if err != nil || in.SessionID != "s1" {
			t.Errorf("%s: the adapter cannot read the plugin's payload: %+v %v", ev, in, err)
		}
		if ev == "summarize" && (in.LastAssistantMessage == nil || *in.LastAssistantMessage != "All fixed.") {
			t.Errorf("summary input: %+v", in)
		}
		if ev == "observation" && (in.ToolName != "Bash" || in.ToolUseID != "c1") {
			t.Errorf("observation: %+v", in)
		}
	}
	if want := []string{"context", "session-init", "observation", "summarize"}; !reflect.DeepEqual(events, want) {
		t.Fatalf("hook calls = %v, want %v", events, want)
	}

	// A hook binary that is gone: every hook still resolves, nothing is injected.
	js, _ = plugin(filepath.Join(dir, "missing"))
	if err := os.WriteFile(pluginPath, js, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(node, driver).CombinedOutput(); err != nil || !strings.Contains(string(out), `"a":["You are opencode."]`) {
		t.Fatalf("with the hook binary missing: %v\n%s", err, out)
	}
}

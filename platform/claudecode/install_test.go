package claudecode

import (
	"encoding/json"
	"errors"
	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform/platformtest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const bin = "/opt/memnode/bin/memnode"

func userOpts(t *testing.T) install.Options {
	t.Helper()
	home := t.TempDir()
	return install.Options{Scope: install.ScopeUser, HomeDir: home, Binary: bin}
}

func actions(cs []install.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Action)
	}
	return out
}

// A settings file with someone else's hooks in the events memnode uses, and other keys.
const foreignSettings = `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"], "deny": []},
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard.sh", "timeout": 5}]}
    ],
    "Stop": [
      {"hooks": [{"type": "command", "command": "notify-send done"}]}
    ],
    "Notification": [
      {"hooks": [{"type": "command", "command": "say hi"}]}
    ]
  },
  "enabledPlugins": {"claude-mem@thedotmack": false}
}
`

const foreignClaudeJSON = `{"numStartups": 42, "mcpServers": {"github": {"type": "stdio", "command": "gh-mcp", "args": []}}, "projects": {"/x": {"allowedTools": []}}}`

func TestInstallFreshUserScope(t *testing.T) {
	o := userOpts(t)
	cs, err := (Installer{}).Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); !reflect.DeepEqual(got, []string{"created", "created"}) {
		t.Fatalf("actions = %v", got)
	}
	s := platformtest.ReadJSON(t, filepath.Join(o.HomeDir, ".claude", "settings.json"))
	hooks := s["hooks"].(map[string]any)
	want := map[string]struct {
		matcher string
		cmd     string
		timeout float64
	}{
		"SessionStart":       {"startup|resume|clear|compact", bin + " hook claude-code context", 60},
		"UserPromptSubmit":   {"", bin + " hook claude-code session-init", 60},
		"PreToolUse":         {"Read", bin + " hook claude-code file-context", 60},
		"PostToolUse":        {"*", bin + " hook claude-code observation", 120},
		"PostToolUseFailure": {"*", bin + " hook claude-code observation", 120},
		"Stop":               {"", bin + " hook claude-code summarize", 120},
		"SessionEnd":         {"", bin + " hook claude-code session-end", 60},
	}
	if len(hooks) != len(want) {
		t.Fatalf("hooks has %d events, want %d: %v", len(hooks), len(want), hooks)
	}
	for ev, w := range want {
		groups := hooks[ev].([]any)
		if len(groups) != 1 {
			t.Fatalf("%s: %d groups", ev, len(groups))
		}
		g := groups[0].(map[string]any)
		m, hasM := g["matcher"]
		if (w.matcher == "") == hasM || (hasM && m != w.matcher) {
			t.Errorf("%s matcher = %v, want %q", ev, m, w.matcher)
		}
		h := g["hooks"].([]any)[0].(map[string]any)
		if h["type"] != "command" || h["command"] != w.cmd || h["timeout"] != w.timeout {
			t.Errorf("%s entry = %v", ev, h)
		}
	}
	c := platformtest.ReadJSON(t, filepath.Join(o.HomeDir, ".claude.json"))
	wantMCP := map[string]any{"type": "stdio", "command": bin, "args": []any{"mcp"}}
	if got := c["mcpServers"].(map[string]any)["memnode"]; !reflect.DeepEqual(got, wantMCP) {
		t.Fatalf("mcp entry = %v", got)
	}
	fi, err := os.Stat(filepath.Join(o.HomeDir, ".claude.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("~/.claude.json mode = %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestInstallIdempotentAndPreservesForeign(t *testing.T) {
	o := userOpts(t)
	settings := filepath.Join(o.HomeDir, ".claude", "settings.json")
	claude := filepath.Join(o.HomeDir, ".claude.json")
	platformtest.WriteFile(t, settings, foreignSettings, 0o640)
	platformtest.WriteFile(t, claude, foreignClaudeJSON, 0o600)

	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(settings)
	firstClaude, _ := os.ReadFile(claude)
	cs, err := (Installer{}).Install(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); !reflect.DeepEqual(got, []string{"unchanged", "unchanged"}) {
		t.Fatalf("second install: %v", got)
	}
	second, _ := os.ReadFile(settings)
	secondClaude, _ := os.ReadFile(claude)
	if string(first) != string(second) || string(firstClaude) != string(secondClaude) {
		t.Fatal("second install changed a file")
	}
	if fi, _ := os.Stat(settings); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode changed to %v", fi.Mode())
	}
	// Key order of the user's file is kept; memnode's keys follow.
	if i, j := strings.Index(string(first), `"model"`), strings.Index(string(first), `"enabledPlugins"`); i < 0 || j < i {
		t.Fatalf("key order not kept:\n%s", first)
	}

	s := platformtest.ReadJSON(t, settings)
	if s["model"] != "opus" || s["enabledPlugins"] == nil || s["permissions"] == nil {
		t.Fatalf("foreign keys lost: %v", s)
	}
	hooks := s["hooks"].(map[string]any)
	pre := hooks["PreToolUse"].([]any)
	if len(pre) != 2 || pre[0].(map[string]any)["matcher"] != "Bash" {
		t.Fatalf("PreToolUse = %v", pre)
	}
	if stop := hooks["Stop"].([]any); len(stop) != 2 {
		t.Fatalf("Stop = %v", stop)
	}
	if hooks["Notification"] == nil {
		t.Fatal("foreign Notification hook lost")
	}
	c := platformtest.ReadJSON(t, claude)
	if c["numStartups"] != float64(42) || c["mcpServers"].(map[string]any)["github"] == nil || c["projects"] == nil {
		t.Fatalf("~/.claude.json foreign keys lost: %v", c)
	}
	if _, err := os.Stat(settings + ".memnode-backup"); err != nil {
		t.Fatalf("no backup of the previous settings: %v", err)
	}
}

func TestUninstallRestoresOriginal(t *testing.T) {
	o := userOpts(t)
	settings := filepath.Join(o.HomeDir, ".claude", "settings.json")
	claude := filepath.Join(o.HomeDir, ".claude.json")
	platformtest.WriteFile(t, settings, foreignSettings, 0o644)
	platformtest.WriteFile(t, claude, foreignClaudeJSON, 0o600)
	origS, origC := platformtest.ReadJSON(t, settings), platformtest.ReadJSON(t, claude)

	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	cs, err := (Installer{}).Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); !reflect.DeepEqual(got, []string{"restored", "restored"}) {
		t.Fatalf("uninstall: %v", got)
	}
	if got := platformtest.ReadJSON(t, settings); !reflect.DeepEqual(got, origS) {
		t.Fatalf("settings after uninstall:\n%v\nwant\n%v", got, origS)
	}
	if got := platformtest.ReadJSON(t, claude); !reflect.DeepEqual(got, origC) {
		t.Fatalf("~/.claude.json after uninstall:\n%v\nwant\n%v", got, origC)
	}
	assertBytes(t, settings, foreignSettings)
	assertBytes(t, claude, foreignClaudeJSON)
	assertNoBackups(t, o.HomeDir)
	// Again: nothing left to remove.
	cs, err = (Installer{}).Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); !reflect.DeepEqual(got, []string{"unchanged", "unchanged"}) {
		t.Fatalf("second uninstall: %v", got)
	}
}

func TestUninstallRemovesFilesOnlyMemnodeUsed(t *testing.T) {
	o := install.Options{Scope: install.ScopeProject, ProjectDir: t.TempDir(), Binary: bin}
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(o.ProjectDir, ".mcp.json")); err != nil {
		t.Fatalf("project scope must write .mcp.json: %v", err)
	}
	cs, err := (Installer{}).Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); !reflect.DeepEqual(got, []string{"removed", "removed"}) {
		t.Fatalf("actions = %v", got)
	}
	for _, p := range []string{filepath.Join(o.ProjectDir, ".claude", "settings.json"), filepath.Join(o.ProjectDir, ".mcp.json")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s still there after uninstall: %v", p, err)
		}
	}
}

func TestUninstallMissingFilesCreatesNothing(t *testing.T) {
	o := userOpts(t)
	cs, err := (Installer{}).Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); !reflect.DeepEqual(got, []string{"absent", "absent"}) {
		t.Fatalf("actions = %v", got)
	}
	if _, err := os.Stat(filepath.Join(o.HomeDir, ".claude")); !os.IsNotExist(err) {
		t.Fatalf("uninstall created files: %v", err)
	}
}

func TestMalformedSettingsUntouched(t *testing.T) {
	cases := map[string]string{
		"syntax":        `{"hooks": {`,
		"not an object": `[1, 2]`,
		"hooks type":    `{"hooks": []}`,
		"event type":    `{"hooks": {"Stop": {"x": 1}}}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			o := userOpts(t)
			settings := filepath.Join(o.HomeDir, ".claude", "settings.json")
			platformtest.WriteFile(t, settings, content, 0o644)
			for _, do := range []func(install.Options) ([]install.Change, error){Installer{}.Install, Installer{}.Uninstall} {
				_, err := do(o)
				if !errors.Is(err, install.ErrMalformed) || !strings.Contains(err.Error(), settings) {
					t.Fatalf("err = %v, want install.ErrMalformed naming the file", err)
				}
				if b, _ := os.ReadFile(settings); string(b) != content {
					t.Fatalf("file changed to %s", b)
				}
				if _, err := os.Stat(filepath.Join(o.HomeDir, ".claude.json")); !os.IsNotExist(err) {
					t.Fatal("the other file was written although the first was malformed")
				}
			}
		})
	}
}

func TestReinstallAfterBinaryMoved(t *testing.T) {
	o := userOpts(t)
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	o.Binary = "/home/me/My Tools/memnode"
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	s := platformtest.ReadJSON(t, filepath.Join(o.HomeDir, ".claude", "settings.json"))
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), "/opt/memnode") {
		t.Fatalf("stale entries of the old binary remain: %s", b)
	}
	groups := s["hooks"].(map[string]any)["PostToolUse"].([]any)
	cmd := groups[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"]
	if len(groups) != 1 || cmd != "'/home/me/My Tools/memnode' hook claude-code observation" {
		t.Fatalf("PostToolUse = %v", groups)
	}
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(o.HomeDir, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatalf("settings left after uninstall: %v", err)
	}
}

func TestInstallLeanHookBinary(t *testing.T) {
	o := userOpts(t)
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	// An upgrade that brings memnode-hook replaces the hooks that ran memnode itself.
	o.HookBinary = "/opt/memnode/bin/memnode-hook"
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	s := platformtest.ReadJSON(t, filepath.Join(o.HomeDir, ".claude", "settings.json"))
	for ev, groups := range s["hooks"].(map[string]any) {
		gs := groups.([]any)
		cmd := gs[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["command"].(string)
		if len(gs) != 1 || !strings.HasPrefix(cmd, o.HookBinary+" hook claude-code ") {
			t.Errorf("%s = %v", ev, gs)
		}
	}
	c := platformtest.ReadJSON(t, filepath.Join(o.HomeDir, ".claude.json"))
	if got := c["mcpServers"].(map[string]any)["memnode"].(map[string]any)["command"]; got != bin {
		t.Errorf("mcp command = %v, want %s", got, bin)
	}
	if _, err := (Installer{}).Uninstall(o); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(o.HomeDir, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Fatalf("settings left after uninstall: %v", err)
	}
}

func TestSymlinkedSettingsStaysALink(t *testing.T) {
	o := userOpts(t)
	dotfiles := filepath.Join(t.TempDir(), "settings.json")
	platformtest.WriteFile(t, dotfiles, `{"model":"opus"}`, 0o644)
	link := filepath.Join(o.HomeDir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dotfiles, link); err != nil {
		t.Fatal(err)
	}
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("settings.json is no longer a symlink: %v", err)
	}
	if s := platformtest.ReadJSON(t, dotfiles); s["hooks"] == nil || s["model"] != "opus" {
		t.Fatalf("link target = %v", s)
	}
}

func assertBytes(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Fatalf("%s is not byte-identical (%v):\n%q\nwant\n%q", path, err, b, want)
	}
}

func assertNoBackups(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".memnode-backup") {
			t.Errorf("backup left behind: %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUninstallByteExact: install twice, uninstall once, and each file has its original
// bytes again — odd indentation, no trailing newline (as Claude Code writes ~/.claude.json)
// — with no backup left behind.
func TestUninstallByteExact(t *testing.T) {
	o := userOpts(t)
	settings := filepath.Join(o.HomeDir, ".claude", "settings.json")
	claude := filepath.Join(o.HomeDir, ".claude.json")
	origS := "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n    }\n}"
	origC := "{\n  \"numStartups\": 7,\n  \"mcpServers\": {}\n}"
	platformtest.WriteFile(t, settings, origS, 0o644)
	platformtest.WriteFile(t, claude, origC, 0o600)
	for range 2 {
		if _, err := (Installer{}).Install(o); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := (Installer{}).Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); !reflect.DeepEqual(got, []string{"restored", "restored"}) {
		t.Fatalf("uninstall: %v", got)
	}
	assertBytes(t, settings, origS)
	assertBytes(t, claude, origC)
	assertNoBackups(t, o.HomeDir)
}

// TestUninstallAfterOtherChanges: when the agent changed the file since install, uninstall
// removes exactly memnode's entries and keeps the other change and the file's formatting.
func TestUninstallAfterOtherChanges(t *testing.T) {
	o := userOpts(t)
	claude := filepath.Join(o.HomeDir, ".claude.json")
	platformtest.WriteFile(t, claude, "{\n    \"numStartups\": 7\n}", 0o600)
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(claude)
	if err != nil {
		t.Fatal(err)
	}
	// Claude Code counts a start-up meanwhile.
	platformtest.WriteFile(t, claude, strings.Replace(string(b), `"numStartups": 7`, `"numStartups": 8`, 1), 0o600)
	cs, err := (Installer{}).Uninstall(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(cs); !reflect.DeepEqual(got, []string{"removed", "updated"}) {
		t.Fatalf("uninstall: %v", got)
	}
	assertBytes(t, claude, "{\n    \"numStartups\": 8\n}")
	assertNoBackups(t, o.HomeDir)
}

// TestReinstallDropsSubagentStop: an install from before SubagentStop was dropped is
// brought up to date: the SubagentStop entry goes, resume and PostToolUseFailure come.
func TestReinstallDropsSubagentStop(t *testing.T) {
	o := userOpts(t)
	settings := filepath.Join(o.HomeDir, ".claude", "settings.json")
	platformtest.WriteFile(t, settings, `{"hooks": {
  "SessionStart": [{"matcher": "startup|clear|compact", "hooks": [{"type": "command", "command": "`+bin+` hook claude-code context", "timeout": 60}]}],
  "SubagentStop": [{"hooks": [{"type": "command", "command": "`+bin+` hook claude-code summarize", "timeout": 120}]}]
}}`, 0o644)
	if _, err := (Installer{}).Install(o); err != nil {
		t.Fatal(err)
	}
	hooks := platformtest.ReadJSON(t, settings)["hooks"].(map[string]any)
	if _, ok := hooks["SubagentStop"]; ok {
		t.Fatalf("SubagentStop kept: %v", hooks["SubagentStop"])
	}
	start := hooks["SessionStart"].([]any)
	if len(start) != 1 || start[0].(map[string]any)["matcher"] != "startup|resume|clear|compact" || hooks["PostToolUseFailure"] == nil {
		t.Fatalf("hooks not brought up to date: %v", hooks)
	}
}

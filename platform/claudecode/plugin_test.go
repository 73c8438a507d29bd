package claudecode

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginHooksMatchInstall: the Claude Code plugin (plugin/hooks/hooks.json) runs the same
// memnode hook events, on the same Claude Code events, matchers and timeouts, as `memnode
// install claude-code` writes: one list of hooks, two ways to install it.
func TestPluginHooksMatchInstall(t *testing.T) {
	b, err := os.ReadFile("../../plugin/hooks/hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	specs := hookSpecs()
	if len(doc.Hooks) != len(specs) {
		t.Errorf("plugin has %d hook events, install %d", len(doc.Hooks), len(specs))
	}
	for _, s := range specs {
		groups := doc.Hooks[s.Event]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Errorf("%s: plugin has %d groups, want 1 with one hook", s.Event, len(groups))
			continue
		}
		g, h := groups[0], groups[0].Hooks[0]
		want := `"${CLAUDE_PLUGIN_ROOT}/scripts/hook.sh" ` + s.Sub
		if g.Matcher != s.Matcher || h.Type != "command" || h.Command != want || h.Timeout != s.Timeout {
			t.Errorf("%s: plugin runs %q (matcher %q, timeout %d), install runs %s (matcher %q, timeout %d)",
				s.Event, h.Command, g.Matcher, h.Timeout, s.Sub, s.Matcher, s.Timeout)
		}
		if strings.Contains(h.Command, "hook claude-code") {
			t.Errorf("%s: the plugin's command must not look like memnode install's (hook.sh tells them apart)", s.Event)
		}
	}
}

// TestPluginHookWithoutMemnode: the plugin's hook on a machine without memnode never blocks
// the session: exit 0, and only at session start one line telling how to get memnode.
func TestPluginHookWithoutMemnode(t *testing.T) {
	bin := t.TempDir() // sh and the few tools hook.sh uses; no memnode
	for _, name := range []string{"sh", "dirname", "grep", "cat"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Skipf("no %s: %v", name, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	run := func(event string) (string, int) {
		cmd := exec.Command(filepath.Join(bin, "sh"), "../../plugin/scripts/hook.sh", event)
		cmd.Env = []string{"PATH=" + bin, "HOME=" + home, "CLAUDE_PROJECT_DIR=" + home}
		cmd.Stdin = strings.NewReader(`{"session_id":"s","hook_event_name":"SessionStart"}`)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := run("context")
	var msg struct {
		SystemMessage string `json:"systemMessage"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &msg) != nil || !strings.Contains(msg.SystemMessage, "npm install -g memnode") || strings.Count(out, "\n") != 1 {
		t.Errorf("context without memnode: exit %d, output %q; want exit 0 and one systemMessage line naming npm install -g memnode", code, out)
	}
	if out, code := run("observation"); code != 0 || out != "" {
		t.Errorf("observation without memnode: exit %d, output %q; want exit 0 and nothing", code, out)
	}
	// With `memnode install claude-code`'s hooks in settings.json the plugin's hook steps aside.
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"/x/memnode-hook hook claude-code context"}]}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run("context"); code != 0 || out != "" {
		t.Errorf("context beside memnode install's hooks: exit %d, output %q; want exit 0 and nothing", code, out)
	}
}

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// TestReadmeConfigSnippetsMerge follows the README as a user does: every `memnode config
// set` line of its code blocks, in order (the AI-provider section, then the sync section),
// on the real binary. The later ones must not erase the earlier ones — the README's
// `echo '{…}' > settings.json` snippets did — and the file stays 0600 and valid.
func TestReadmeConfigSnippetsMerge(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^echo .*> *~?/?.*settings\.json`).Match(readme) {
		t.Error("the README still overwrites settings.json with echo … >")
	}
	sets := regexp.MustCompile(`(?m)^memnode config set ([a-z_.]+) (\S+)`).FindAllStringSubmatch(string(readme), -1)
	keys := map[string]string{}
	for _, m := range sets {
		keys[m[1]] = m[2]
	}
	for _, want := range []string{"ai_providers", "sync_host"} {
		if keys[want] == "" {
			t.Fatalf("the README has no `memnode config set %s` line (found %v)", want, keys)
		}
	}
	in := e2ekit.NewInstance(t)
	for _, m := range sets {
		if out := in.MustRun(nil, "config", "set", m[1], m[2]); !strings.Contains(out, "applies it when it starts") {
			t.Errorf("config set %s with no node running: %q", m[1], out)
		}
	}
	path := filepath.Join(in.DataDir, "settings.json")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings.json: %v, mode %v", err, fi.Mode())
	}
	b, _ := os.ReadFile(path)
	var file map[string]any
	if err := json.Unmarshal(b, &file); err != nil {
		t.Fatalf("settings.json after the README: %v\n%s", err, b)
	}
	if len(file) != len(keys) {
		t.Errorf("settings.json holds %d keys, the README set %d:\n%s", len(file), len(keys), b)
	}
	// The README's last `config set ai_providers` wins (its agent CLI example follows the key one).
	if got, want := strings.TrimSpace(in.MustRun(nil, "config", "get", "ai_providers")), `["`+strings.ReplaceAll(keys["ai_providers"], ",", `","`)+`"]`; got != want {
		t.Errorf("config get ai_providers = %s, want %s", got, want)
	}
	if got := strings.TrimSpace(in.MustRun(nil, "config", "get", "sync_host")); got != "0.0.0.0" {
		t.Errorf("config get sync_host = %s", got)
	}

	// A bad value changes nothing and says why on one line; a running node is named.
	before, _ := os.ReadFile(path)
	r := in.Run(nil, "config", "set", "port", "99999")
	after, _ := os.ReadFile(path)
	if r.Code != 1 || len(e2ekit.Lines(r.Stderr)) != 1 || string(before) != string(after) {
		t.Errorf("config set port 99999: exit %d, stderr %q, file changed: %v", r.Code, r.Stderr, string(before) != string(after))
	}
	in.MustRun(nil, "config", "unset", "sync_host") // the test node listens on loopback only
	in.Start()
	if out := in.MustRun(nil, "config", "set", "mdns", "true"); !strings.Contains(out, "after a restart") {
		t.Errorf("config set with the node running: %q", out)
	}
	// A live setting is applied by the running node at once (its log says so).
	if out := in.MustRun(nil, "config", "set", "context_observations", "7"); !strings.Contains(out, "the running node (pid") || !strings.Contains(out, "applied it") {
		t.Errorf("config set of a live setting with the node running: %q", out)
	}
	logPath := filepath.Join(in.DataDir, "logs", "memnode.log")
	if log, _ := os.ReadFile(logPath); !strings.Contains(string(log), "changed=context_observations") {
		t.Errorf("the node's log does not say it applied context_observations:\n%s", e2ekit.Tail(string(log), 1500))
	}
	// The log level is live too: at error, the next applied setting is not logged.
	if out := in.MustRun(nil, "config", "set", "log_level", "error"); !strings.Contains(out, "applied it") {
		t.Errorf("config set log_level: %q", out)
	}
	in.MustRun(nil, "config", "set", "context_observations", "9")
	if log, _ := os.ReadFile(logPath); strings.Count(string(log), "changed=context_observations") != 1 {
		t.Errorf("at log_level error the node still logs at info:\n%s", e2ekit.Tail(string(log), 1500))
	}
	if out := in.MustRun(nil, "config", "list"); !strings.Contains(out, "ai_daily_token_budget") || !regexp.MustCompile(`ai_providers\s+\["claude-code"\]\s+settings.json`).MatchString(out) {
		t.Errorf("config list:\n%s", out)
	}
}

// TestContextSettingsApplyLive (issue 32): the context settings are live — `memnode config
// set` of one is applied by the running node (same pid), and the next session-start context
// shows it: the economics line goes with context_economics_off, a type goes with
// context_exclude_types.
func TestContextSettingsApplyLive(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	pid := in.PidFile()
	in.MustRun(nil, "save", "we deploy with blue-green switches", "--project", "demo", "--title", "deploy style")
	in.MustRun(nil, "save", "staging is rebuilt every night", "--project", "demo", "--title", "staging nightly", "--type", "decision")
	ctx := func() string { return in.MustRun(nil, "context", "--project", "demo") }
	if c := ctx(); !strings.Contains(c, "Token economics:") || !strings.Contains(c, "deploy style") || !strings.Contains(c, "staging nightly") {
		t.Fatalf("context before the settings:\n%s", c)
	}
	for _, kv := range [][2]string{{"context_economics_off", "true"}, {"context_exclude_types", "note"}} {
		if out := in.MustRun(nil, "config", "set", kv[0], kv[1]); !strings.Contains(out, "applied it") {
			t.Fatalf("config set %s %s: %s", kv[0], kv[1], out)
		}
	}
	c := ctx()
	if strings.Contains(c, "Token economics:") || strings.Contains(c, "deploy style") || !strings.Contains(c, "staging nightly") {
		t.Fatalf("context after context_economics_off and context_exclude_types note:\n%s", c)
	}
	if got := in.PidFile(); got != pid {
		t.Fatalf("the node restarted (pid %d, was %d): the settings are live", got, pid)
	}
}

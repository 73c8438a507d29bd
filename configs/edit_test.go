package configs

import (
	"strings"
	"testing"
	"time"
)

func strp(s string) *string { return &s }

// TestEditMerges: each Edit keeps every other key (the README's AI section then its sync
// section, what `echo … >` used to lose), reads values by kind, and refuses what the node
// would refuse.
func TestEditMerges(t *testing.T) {
	file := []byte(`{"ai_providers": ["anthropic"], "skip_tools": ["Glob"]}`)
	steps := []struct {
		key   string
		value *string
	}{
		{"ai_models.anthropic", strp("claude-haiku-4-5")},
		{"sync_host", strp("0.0.0.0")},
		{"mdns", strp("true")},
		{"hook_timeout", strp("3s")},
		{"excluded_projects", strp("scratch, tmp-*")},
		{"skip_tools", nil},
	}
	for _, s := range steps {
		var err error
		if file, err = Edit(file, s.key, s.value); err != nil {
			t.Fatalf("Edit %s: %v", s.key, err)
		}
	}
	got, err := ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.AIProviders) != 1 || got.AIModels["anthropic"] != "claude-haiku-4-5" || got.SyncHost != "0.0.0.0" || !got.MDNS ||
		time.Duration(got.HookTimeout) != 3*time.Second || strings.Join(got.ExcludedProjects, "|") != "scratch|tmp-*" || strings.Contains(string(file), "skip_tools") {
		t.Errorf("after the edits:\n%s", file)
	}
	if v, _ := Value(got, "ai_models.anthropic"); v != "claude-haiku-4-5" {
		t.Errorf("Value(ai_models.anthropic) = %q", v)
	}
	if v, _ := Value(got, "fsync_acks"); v != "false" {
		t.Errorf("Value(fsync_acks) = %q", v)
	}
	for _, bad := range []struct{ key, value string }{
		{"nosuch", "1"}, {"port", "abc"}, {"port", "70000"}, {"mdns", "maybe"}, {"hook_timeout", "soon"},
		{"ai_providers", "anthropic,bogus"}, {"sync_host.x", "1"}, {"ai_models", "novalue"},
	} {
		if _, err := Edit(file, bad.key, strp(bad.value)); err == nil {
			t.Errorf("Edit(%s=%s) accepted", bad.key, bad.value)
		}
	}
	if _, err := Edit([]byte("not json"), "mdns", strp("true")); err == nil {
		t.Error("Edit over a file that is not JSON accepted")
	}
}

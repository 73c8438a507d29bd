package platformtest

import (
	"os"
	"strings"
	"testing"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/platform"
)

// UpgradeDropsHook checks an install over an older layout that registered one hook more:
// with the user's file old.Settings holding orig, old (memnode's hooks then, among them the
// one for memnode event sub) is installed, rewrite (when set: the agent's own rewrite of the
// file) runs, and inst installs again. The file must then hold no hook for sub and the
// target's memnode hooks once each (hooks of them), and uninstall must give orig back. It
// returns the file as the upgrade left it.
func UpgradeDropsHook(tb testing.TB, inst platform.Installer, opts install.Options, old install.Target, orig, sub string, hooks int, rewrite func()) string {
	tb.Helper()
	WriteFile(tb, old.Settings, orig, 0o600)
	if _, err := install.Install(old, opts); err != nil {
		tb.Fatal(err)
	}
	marker := " hook " + old.Platform + " "
	if b, _ := os.ReadFile(old.Settings); !strings.Contains(string(b), marker+sub) {
		tb.Fatalf("the old layout is not installed:\n%s", b)
	}
	if rewrite != nil {
		rewrite()
	}
	if _, err := inst.Install(opts); err != nil {
		tb.Fatal(err)
	}
	b, _ := os.ReadFile(old.Settings)
	upgraded := string(b)
	if strings.Contains(upgraded, marker+sub) {
		tb.Errorf("the upgrade keeps the %s hook:\n%s", sub, upgraded)
	}
	if n := strings.Count(upgraded, marker); n != hooks {
		tb.Errorf("%s has %d memnode hooks after the upgrade, want %d:\n%s", old.Settings, n, hooks, upgraded)
	}
	if _, err := inst.Uninstall(opts); err != nil {
		tb.Fatal(err)
	}
	if got, _ := os.ReadFile(old.Settings); string(got) != orig {
		tb.Fatalf("uninstall after the upgrade: %q, want %q", got, orig)
	}
	return upgraded
}

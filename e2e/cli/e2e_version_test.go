package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// TestVersionNamesCommitDateAndPlatform: `memnode version` (and --version) prints what a bug
// report needs: version, commit, build date, platform.
func TestVersionNamesCommitDateAndPlatform(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out := in.MustRun(nil, args...)
		for _, want := range []string{"memnode ", "commit ", "built ", runtime.GOOS + "/" + runtime.GOARCH, runtime.Version()} {
			if !strings.Contains(out, want) {
				t.Errorf("memnode %v = %q, lacks %q", args, out, want)
			}
		}
	}
	out := in.RunLean(nil, "version").Stdout
	if !strings.HasPrefix(out, "memnode-hook ") || !strings.Contains(out, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("memnode-hook version = %q", out)
	}
}

// TestStatusReportsHooksOfAVanishedBinary: after an upgrade moved memnode, the hooks Claude
// Code runs point at a binary that is gone; `memnode status` says so and what to run, and
// re-running install from the new place clears it.
func TestStatusReportsHooksOfAVanishedBinary(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t) // HOME is the instance's data dir
	old := filepath.Join(t.TempDir(), "old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"memnode", "memnode-hook"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(e2ekit.MemnodeBin), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if r := in.RunBin(filepath.Join(old, "memnode"), nil, "install", "claude-code"); r.Code != 0 {
		t.Fatalf("install from the old place: exit %d: %s", r.Code, r.Stderr)
	}
	if out := in.Run(nil, "status").Stdout; strings.Contains(out, "warning") {
		t.Fatalf("status warns while the installed binaries exist:\n%s", out)
	}
	if err := os.RemoveAll(old); err != nil {
		t.Fatal(err)
	}
	out := in.Run(nil, "status").Stdout
	settings := filepath.Join(in.DataDir, ".claude", "settings.json")
	for _, want := range []string{settings + " runs " + filepath.Join(old, "memnode-hook"), filepath.Join(old, "memnode") + ", which is gone", "run 'memnode install claude-code' again"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	in.MustRun(nil, "install", "claude-code")
	if out := in.Run(nil, "status").Stdout; strings.Contains(out, "warning") {
		t.Errorf("status still warns after install ran again:\n%s", out)
	}
}

package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestVersionNamesCommitDateAndPlatform: `memnode version` (and --version) prints what a bug
// report needs: version, commit, build date, platform.
func TestVersionNamesCommitDateAndPlatform(t *testing.T) {
	in := newInstance(t)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out := in.mustRun(nil, args...)
		for _, want := range []string{"memnode ", "commit ", "built ", runtime.GOOS + "/" + runtime.GOARCH, runtime.Version()} {
			if !strings.Contains(out, want) {
				t.Errorf("memnode %v = %q, lacks %q", args, out, want)
			}
		}
	}
	out := in.runLean(nil, "version").stdout
	if !strings.HasPrefix(out, "memnode-hook ") || !strings.Contains(out, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("memnode-hook version = %q", out)
	}
}

// TestStatusReportsHooksOfAVanishedBinary: after an upgrade moved memnode, the hooks Claude
// Code runs point at a binary that is gone; `memnode status` says so and what to run, and
// re-running install from the new place clears it.
func TestStatusReportsHooksOfAVanishedBinary(t *testing.T) {
	in := newInstance(t) // HOME is the instance's data dir
	old := filepath.Join(t.TempDir(), "old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"memnode", "memnode-hook"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(memnodeBin), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(old, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if r := in.runBin(filepath.Join(old, "memnode"), nil, "install", "claude-code"); r.code != 0 {
		t.Fatalf("install from the old place: exit %d: %s", r.code, r.stderr)
	}
	if out := in.run(nil, "status").stdout; strings.Contains(out, "warning") {
		t.Fatalf("status warns while the installed binaries exist:\n%s", out)
	}
	if err := os.RemoveAll(old); err != nil {
		t.Fatal(err)
	}
	out := in.run(nil, "status").stdout
	settings := filepath.Join(in.dataDir, ".claude", "settings.json")
	for _, want := range []string{settings + " runs " + filepath.Join(old, "memnode-hook"), filepath.Join(old, "memnode") + ", which is gone", "run 'memnode install claude-code' again"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	in.mustRun(nil, "install", "claude-code")
	if out := in.run(nil, "status").stdout; strings.Contains(out, "warning") {
		t.Errorf("status still warns after install ran again:\n%s", out)
	}
}

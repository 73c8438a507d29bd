package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/memnode/memnode/node"
)

// TestStartNamesMissingFTS5: a memnode built without -tags sqlite_fts5 (mattn/go-sqlite3
// then has no FTS5) makes `memnode run` exit 1 and `memnode start` fail on a fresh data
// dir, each within the 10 s bound with one line that names FTS5 and how to rebuild.
func TestStartNamesMissingFTS5(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds memnode without -tags sqlite_fts5 (go-sqlite3's C once, about a minute cold; cached after)")
	}
	bin := noFTS5Binary(t)
	in := newInstance(t)
	r := in.runBin(bin, nil, "run")
	if r.code != 1 {
		t.Errorf("run exit code = %d, want 1\nstderr: %s", r.code, r.stderr)
	}
	want := []string{"memnode.db", "FTS5", "-tags sqlite_fts5"}
	checkFailLine(t, "run", r, want...)
	checkFailLine(t, "start", in.runBin(bin, nil, "start"), want...)
	if node.Held(in.dataDir) {
		t.Fatal("a node still holds the data dir")
	}
}

// noFTS5Binary is memnode built from this source without the sqlite_fts5 tag, cached in
// $XDG_CACHE_HOME/memnode-test/nofts5/<sha256 of memnodeBin> (the FTS5 build of the same
// source and toolchain): a changed source builds it again, and older builds are removed.
func noFTS5Binary(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("find the cache dir for the no-FTS5 build (set XDG_CACHE_HOME): %v", err)
	}
	root := filepath.Join(cache, "memnode-test", "nofts5")
	f, err := os.Open(memnodeBin)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	bin := filepath.Join(root, key, "memnode")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if old, err := os.ReadDir(root); err == nil {
		for _, e := range old {
			_ = os.RemoveAll(filepath.Join(root, e.Name())) // builds of other sources
		}
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	// Built beside the final name, then renamed: a parallel test process building the same
	// binary, or an interrupted build, never leaves a half-written one under that name.
	tmp := bin + ".tmp-" + filepath.Base(t.TempDir())
	started := time.Now()
	build := exec.Command("go", "build", "-tags", "nomsgpack", "-o", tmp, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build memnode without sqlite_fts5: %v\n%s", err, out)
	}
	t.Logf("built memnode without sqlite_fts5 in %s", time.Since(started).Round(100*time.Millisecond))
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

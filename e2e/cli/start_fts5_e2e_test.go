package cli

import (
	"path/filepath"
	"testing"

	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testbin"
)

// TestStartNamesMissingFTS5: a memnode built without -tags sqlite_fts5 (mattn/go-sqlite3
// then has no FTS5) makes `memnode run` exit 1 and `memnode start` fail on a fresh data
// dir, each within the 10 s bound with one line that names FTS5 and how to rebuild.
func TestStartNamesMissingFTS5(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: builds memnode without -tags sqlite_fts5 (go-sqlite3's C once, about a minute cold; cached after)")
	}
	bin := noFTS5Binary(t)
	in := e2ekit.NewInstance(t)
	r := in.RunBin(bin, nil, "run")
	if r.Code != 1 {
		t.Errorf("run exit code = %d, want 1\nstderr: %s", r.Code, r.Stderr)
	}
	want := []string{"memnode.db", "FTS5", "-tags sqlite_fts5"}
	checkFailLine(t, "run", r, want...)
	checkFailLine(t, "start", in.RunBin(bin, nil, "start"), want...)
	if datadir.Held(in.DataDir) {
		t.Fatal("a node still holds the data dir")
	}
}

// noFTS5Binary is memnode built from this source without the sqlite_fts5 tag, once for
// every test process and checkout (internal/testbin: cached by the sources, built under a
// lock).
func noFTS5Binary(t *testing.T) string {
	t.Helper()
	root, err := testbin.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := testbin.Build(testbin.Set{Dir: root, Bins: []testbin.Spec{{Name: "memnode", Pkg: "./cmd/memnode", Tags: "nomsgpack"}}})
	if err != nil {
		t.Fatalf("build memnode without sqlite_fts5: %v", err)
	}
	return filepath.Join(dir, "memnode")
}

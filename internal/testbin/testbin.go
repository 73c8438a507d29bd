// Package testbin builds the binaries real-process tests run (memnode, memnoded,
// memnode-hook, a no-FTS5 memnode, rqlited) once for every test process that needs them:
// into a cache shared by all test binaries (and checkouts) of the user, named by a hash of
// everything the build reads, under a file lock — so two packages' tests that start together
// build a binary once instead of twice at the same time, and a warm run builds nothing.
package testbin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Spec is one binary to build.
type Spec struct {
	Name string   // the file name in the cache dir: "memnode"
	Pkg  string   // what `go build` builds: "./cmd/memnode", or a module path
	Tags string   // -tags, "" for none
	Env  []string // added to the environment: "CGO_ENABLED=0"
}

// Set is binaries built together into one directory (memnode finds memnode-hook beside
// itself), from one source tree.
type Set struct {
	// Dir is where `go build` runs: the module root, or a tools module.
	Dir string
	// Sources is the tree whose files key the cache ("" = Dir): every file but tests, .md
	// files and what .git, bin, dist, node_modules and testdata hold.
	Sources string
	Bins    []Spec
}

// keep is how many cached builds of other sources stay (other checkouts, older commits).
const keep = 12

// Build returns the directory holding the set's binaries, building them when the cache
// has no build of these sources. Concurrent callers, in any process, wait for one build.
func Build(set Set) (string, error) {
	key, err := set.key()
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("testbin: find the cache dir (set XDG_CACHE_HOME): %w", err)
	}
	root := filepath.Join(cache, "memnode-test", "bin")
	dir := filepath.Join(root, key)
	if done(dir) {
		touch(dir)
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	unlock, err := lock(filepath.Join(root, key+".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if done(dir) { // built while this process waited
		return dir, nil
	}
	tmp, err := os.MkdirTemp(root, key+".tmp-")
	if err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, b := range set.Bins {
		args := []string{"build", "-trimpath", "-o", filepath.Join(tmp, b.Name)}
		if b.Tags != "" {
			args = append(args, "-tags", b.Tags)
		}
		cmd := exec.Command("go", append(args, b.Pkg)...)
		cmd.Dir = set.Dir
		cmd.Env = append(os.Environ(), b.Env...)
		started := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("testbin: go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		fmt.Fprintf(os.Stderr, "testbin: built %s in %s (cached for the next test process)\n", b.Name, time.Since(started).Round(100*time.Millisecond))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".done"), nil, 0o644); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("testbin: %w", err)
	}
	prune(root, key)
	return dir, nil
}

func done(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, ".done"))
	return err == nil
}

func touch(dir string) {
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
}

// key hashes the toolchain, the specs and every source file.
func (set Set) key() (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, b := range set.Bins {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\n", b.Name, b.Pkg, b.Tags, strings.Join(b.Env, "\x00"))
	}
	src := set.Sources
	if src == "" {
		src = set.Dir
	}
	var files []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "dist", "node_modules", "testdata":
				if p != src {
					return filepath.SkipDir
				}
			}
			return nil
		}
		// Tests and docs are not built in (no package embeds a .md): editing them keeps the cache.
		if d.Type().IsRegular() && !strings.HasSuffix(p, "_test.go") && !strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("testbin: read the sources: %w", err)
	}
	slices.Sort(files)
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("testbin: %w", err)
		}
		rel, _ := filepath.Rel(src, p)
		fmt.Fprintf(h, "%s\x00", rel)
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("testbin: %w", err)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// lock takes an exclusive lock on path (flock: released when the process dies).
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("testbin: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("testbin: lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// prune removes all but the newest keep builds (by last use), never the one just made.
func prune(root, current string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	type build struct {
		name string
		used time.Time
	}
	var builds []build
	for _, e := range entries {
		if !e.IsDir() || e.Name() == current || strings.Contains(e.Name(), ".tmp-") {
			continue
		}
		if fi, err := e.Info(); err == nil {
			builds = append(builds, build{e.Name(), fi.ModTime()})
		}
	}
	if len(builds) < keep {
		return
	}
	slices.SortFunc(builds, func(a, b build) int { return b.used.Compare(a.used) })
	for _, b := range builds[keep-1:] {
		_ = os.RemoveAll(filepath.Join(root, b.name))
		_ = os.Remove(filepath.Join(root, b.name+".lock"))
	}
}

// ModuleRoot returns the memnode module's root above the working directory.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module github.com/memnode/memnode\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no memnode go.mod above the working directory")
		}
		dir = parent
	}
}

// Memnode builds the three binaries make builds into one directory, side by side as they
// are installed, and returns it: the lean memnode (no cgo), the daemon memnoded (sqlite_fts5,
// nomsgpack, plus the tag memnode_e2e: test-only knobs read from the environment,
// node/e2egate_e2e.go; inert unless a test sets them) and the lean hook binary (no cgo).
func Memnode() (string, error) {
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	return Build(Set{Dir: root, Bins: []Spec{
		{Name: "memnode", Pkg: "./cmd/memnode", Tags: "memnode_lean,nomsgpack", Env: []string{"CGO_ENABLED=0"}},
		{Name: "memnoded", Pkg: "./cmd/memnode", Tags: "sqlite_fts5,nomsgpack,memnode_e2e"},
		{Name: "memnode-hook", Pkg: "./cmd/memnode-hook", Env: []string{"CGO_ENABLED=0"}},
	}})
}

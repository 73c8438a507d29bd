package cli

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// distDir holds the release archives `make dist` builds (make test builds them through
// release-builds).
const distDir = "../../dist"

// distSums reads dist/SHA256SUMS (archive name → digest), or skips (a fatal error under
// MEMNODE_CI=1) when make dist has not run. Archives of older versions may sit beside the
// current ones in dist/; SHA256SUMS names this build's.
func distSums(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(distDir, "SHA256SUMS"))
	if err != nil {
		msg := "no release archives in " + distDir + ": run 'make dist' (make test does): " + err.Error()
		if os.Getenv("MEMNODE_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	defer f.Close()
	sums := map[string]string{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("SHA256SUMS: malformed line %q", sc.Text())
		}
		sums[name] = sum
	}
	return sums
}

// tarEntries reads a (possibly gzipped) tar file: each regular file's name and content.
func tarEntries(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string][]byte{}
	r := tar.NewReader(z)
	for {
		h, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			t.Fatalf("%s: %s is not a regular file (type %c)", path, h.Name, h.Typeflag)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = b
	}
}

// TestReleaseArchives checks what `make dist` promises (issue 23): each archive holds exactly
// memnode, memnoded, memnode-hook (all executable), the archive README and the repository's LICENSE;
// SHA256SUMS names every archive with its true digest; the npm tarballs carry the same
// LICENSE and name it in package.json.
func TestReleaseArchives(t *testing.T) {
	t.Parallel()
	sums := distSums(t)
	license, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatalf("the repository has no LICENSE: %v", err)
	}
	var archives []string
	for name := range sums {
		archives = append(archives, filepath.Join(distDir, name))
	}
	if !slices.ContainsFunc(archives, func(a string) bool { return strings.HasSuffix(a, "_linux_amd64.tar.gz") }) {
		t.Fatalf("SHA256SUMS names no linux/amd64 archive: %v", archives)
	}
	for _, a := range archives {
		b, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		d := sha256.Sum256(b)
		if got := sums[filepath.Base(a)]; got != hex.EncodeToString(d[:]) {
			t.Errorf("SHA256SUMS has %q for %s, the file's digest is %x", got, filepath.Base(a), d)
		}
		entries := tarEntries(t, a)
		names := slices.Sorted(func(yield func(string) bool) {
			for n := range entries {
				if !yield(n) {
					return
				}
			}
		})
		if want := []string{"LICENSE", "README.md", "memnode", "memnode-hook", "memnoded"}; !slices.Equal(names, want) {
			t.Errorf("%s holds %v, want %v", filepath.Base(a), names, want)
		}
		if string(entries["LICENSE"]) != string(license) {
			t.Errorf("%s: its LICENSE is not the repository's", filepath.Base(a))
		}
		for _, bin := range []string{"memnode", "memnoded", "memnode-hook"} {
			if !strings.HasPrefix(string(entries[bin]), "\x7fELF") {
				t.Errorf("%s: %s is not an ELF binary", filepath.Base(a), bin)
			}
		}
	}

	tgzs, _ := filepath.Glob(filepath.Join(e2ekit.NpmDir, "*.tgz"))
	if len(tgzs) == 0 {
		t.Fatalf("no npm tarballs in %s beside the archives (make npm)", e2ekit.NpmDir)
	}
	for _, p := range tgzs {
		entries := tarEntries(t, p)
		if string(entries["package/LICENSE"]) != string(license) {
			t.Errorf("%s: no LICENSE, or not the repository's", filepath.Base(p))
		}
		var pkg struct{ License string }
		if err := json.Unmarshal(entries["package/package.json"], &pkg); err != nil || pkg.License != "Apache-2.0" {
			t.Errorf("%s: package.json license %q (%v), want Apache-2.0", filepath.Base(p), pkg.License, err)
		}
	}
}

// TestColdBuildSaysWhatItDoes is issue 23's "cold make run prints, within 2 seconds, what it
// is doing and roughly how long the first build takes": make build with an empty Go build
// cache and no binary prints its explanation before the compiler starts. The go command is a
// stand-in that reports an empty GOCACHE and records when the build begins, so the test
// checks the order (message first) without minutes of compiling.
func TestColdBuildSaysWhatItDoes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "gocache")
	if err := os.Mkdir(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	fakeGo := filepath.Join(dir, "go")
	script := "#!/bin/sh\ncase \"$1\" in\n  env) echo " + cache + " ;;\n  build) echo GO-BUILD-STARTS ;;\nesac\n"
	if err := os.WriteFile(fakeGo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "--no-print-directory", "-C", "../..", "build",
		"GO="+fakeGo, "BIN="+filepath.Join(dir, "memnode"), "HOOKBIN="+filepath.Join(dir, "memnode-hook"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	text := string(out)
	msg := strings.Index(text, "first build of memnode")
	build := strings.Index(text, "GO-BUILD-STARTS")
	if msg < 0 || build < 0 || msg > build {
		t.Fatalf("a cold make build must explain itself before compiling:\n%s", text)
	}
	if !strings.Contains(text[:build], "minutes") {
		t.Fatalf("the cold-build message does not say roughly how long it takes:\n%s", text[:build])
	}
	// Warm: the cache has something in it, so the first-build message is not shown.
	if err := os.WriteFile(filepath.Join(cache, "README"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command("make", "--no-print-directory", "-C", "../..", "build",
		"GO="+fakeGo, "BIN="+filepath.Join(dir, "memnode"), "HOOKBIN="+filepath.Join(dir, "memnode-hook")).CombinedOutput()
	if err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "first build of memnode") {
		t.Fatalf("a warm cache still got the first-build message:\n%s", out)
	}
}

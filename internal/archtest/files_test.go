package archtest

import (
	"bytes"
	"crypto/sha256"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileSize is the largest file the repository tracks, fixtures that must be binary aside.
const maxFileSize = 1 << 20

// mustBeBinary are the tracked files allowed past maxFileSize: data another program wrote
// that a test reads as is (the claude-mem sample database).
var mustBeBinary = []string{"testdata/fixtures/claude-mem/*.db"}

// trackedFiles lists the files git tracks in the repository (deleted ones left out).
func trackedFiles(t *testing.T) (root string, files []string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		if os.Getenv("MEMNODE_CI") != "" {
			t.Fatalf("git ls-files: %v", err)
		}
		t.Skipf("git ls-files: %v (run in a git checkout with git installed)", err)
	}
	for _, f := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if fi, err := os.Lstat(filepath.Join(root, f)); err == nil && fi.Mode().IsRegular() {
			files = append(files, f)
		}
	}
	return root, files
}

// TestRepositoryHoldsSource: no tracked file over 1 MB (except data that must be binary),
// no built executable, and one copy of each fixture — a test reads a fixture from its one
// testdata place instead of a copy beside it.
func TestRepositoryHoldsSource(t *testing.T) {
	root, files := trackedFiles(t)
	if len(files) == 0 {
		t.Fatal("git ls-files listed nothing")
	}
	byContent := map[[sha256.Size]byte]string{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > maxFileSize && !matchesAny(f, mustBeBinary) {
			t.Errorf("%s is %d bytes: the repository holds source (limit %d; data that must be binary is listed in mustBeBinary)", f, len(b), maxFileSize)
		}
		if bytes.HasPrefix(b, []byte("\x7fELF")) || bytes.HasPrefix(b, []byte("MZ")) && strings.HasSuffix(f, ".exe") {
			t.Errorf("%s is a built executable: binaries stay out of the repository (.gitignore)", f)
		}
		// Fixtures: any testdata file of some size outside the fuzz corpora (named by
		// their content, so equal inputs of two targets are fine).
		if !strings.Contains("/"+f, "/testdata/") || strings.Contains(f, "testdata/fuzz/") || len(b) < 256 {
			continue
		}
		sum := sha256.Sum256(b)
		if first, ok := byContent[sum]; ok {
			t.Errorf("%s is a copy of %s: keep one copy of each fixture and read it from there", f, first)
			continue
		}
		byContent[sum] = f
	}
}

func matchesAny(path string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := filepath.Match(p, path); ok {
			return true
		}
	}
	return false
}

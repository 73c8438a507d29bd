package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPlainRunKeepsWhatTheRaceRunSkips: make test runs a package of RACE_PKGS only under the
// race detector unless it is in PLAIN_TOO. A package whose tests differ without the detector
// (a `//go:build !race` test file: a test that skips or shrinks under -race) must be in
// PLAIN_TOO, or what its plain run alone tests would run in no run of make test.
func TestPlainRunKeepsWhatTheRaceRunSkips(t *testing.T) {
	root := filepath.Join("..", "..")
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	race, plainToo := makeVar(t, mk, "RACE_PKGS"), makeVar(t, mk, "PLAIN_TOO")
	buildLine := regexp.MustCompile(`(?m)^//go:build .*!race\b`)
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !buildLine.Match(b) {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if inPatterns(rel, race) {
			checked++
			if !inPatterns(rel, plainToo) {
				t.Errorf("%s has a //go:build !race test file (%s) and is in RACE_PKGS but not PLAIN_TOO: make test would never run it without the race detector", rel, filepath.Base(path))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no package of RACE_PKGS has a //go:build !race test file: the check found nothing to check (replica and sync have one)")
	}
}

// makeVar returns the patterns of the Makefile's `name := ...` line.
func makeVar(t *testing.T, mk []byte, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + ` := (.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatalf("the Makefile has no %s := line", name)
	}
	return strings.Fields(string(m[1]))
}

// inPatterns reports whether the package directory dir (relative to the module root) is one
// of the go list patterns ("./x/..." or "./x").
func inPatterns(dir string, patterns []string) bool {
	for _, p := range patterns {
		p = strings.TrimPrefix(p, "./")
		if base, ok := strings.CutSuffix(p, "/..."); ok {
			if dir == base || strings.HasPrefix(dir, base+"/") {
				return true
			}
		} else if dir == p {
			return true
		}
	}
	return false
}

package testbin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Concurrent callers get one build; a changed source gets a new one; a test file does not
// count as source.
func TestBuildOnceBySources(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs three go builds")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	src := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/hello\n\ngo 1.22\n")
	write("main.go", "package main\n\nfunc main() { println(\"one\") }\n")
	set := Set{Dir: src, Bins: []Spec{{Name: "hello", Pkg: ".", Env: []string{"CGO_ENABLED=0"}}}}

	dirs := make([]string, 4)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := Build(set)
			if err != nil {
				t.Error(err)
			}
			dirs[i] = d
		}()
	}
	wg.Wait()
	for _, d := range dirs[1:] {
		if d != dirs[0] {
			t.Fatalf("concurrent builds gave %v, want one directory", dirs)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(dirs[0]))
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("a build left %s behind", e.Name())
		}
	}
	if out, err := exec.Command(filepath.Join(dirs[0], "hello")).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "one" {
		t.Fatalf("built binary says %q (%v)", out, err)
	}

	write("main_test.go", "package main\n")
	if d, err := Build(set); err != nil || d != dirs[0] {
		t.Fatalf("a test file changed the build: %s %v, want %s", d, err, dirs[0])
	}
	write("main.go", "package main\n\nfunc main() { println(\"two\") }\n")
	d, err := Build(set)
	if err != nil || d == dirs[0] {
		t.Fatalf("a changed source reused the old build: %s %v", d, err)
	}
	if out, _ := exec.Command(filepath.Join(d, "hello")).CombinedOutput(); strings.TrimSpace(string(out)) != "two" {
		t.Fatalf("rebuilt binary says %q", out)
	}
}

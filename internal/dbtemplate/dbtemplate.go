// Package dbtemplate gives tests a database built once per test binary: the first Place
// builds it (a replica's Open runs its 19 migrations, ~30 ms of CPU on tmpfs and more with
// fsyncs on a disk), keeps its files in memory and removes them; every Place writes them
// under a new name, so a test opens an up-to-date schema instead of migrating from scratch.
// The migration tests open their databases without it.
package dbtemplate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// stem names the database the build function creates: the template's files are stem plus a
// suffix ("t.db", "t.queue.db"), and Place writes each as the destination's stem plus the
// same suffix.
const stem = "t"

// TB is what Place needs of a test: a *testing.T, or a property test's *rapid.T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Template is a database built on first use. Its zero value is not usable: see New.
type Template struct {
	build func(dbPath string) error
	once  sync.Once
	files map[string][]byte // suffix after the stem → contents
	err   error
}

// New returns a template that build creates: build makes a database at dbPath (a ".db"
// file in an empty directory, with any companion files beside it) and closes it.
func New(build func(dbPath string) error) *Template { return &Template{build: build} }

// Place writes the template's files for a database at dbPath (which must end in ".db")
// unless a file is already there: a test reopening its database keeps it. The files are
// private (0600), like the ones Open creates.
func (t *Template) Place(tb TB, dbPath string) {
	tb.Helper()
	if _, err := os.Lstat(dbPath); err == nil {
		return
	}
	if !strings.HasSuffix(dbPath, ".db") {
		tb.Fatalf("dbtemplate: %s does not end in .db", dbPath)
	}
	t.once.Do(t.load)
	if t.err != nil {
		tb.Fatalf("dbtemplate: %v", t.err)
	}
	base := strings.TrimSuffix(dbPath, ".db")
	for suffix, b := range t.files {
		if err := os.WriteFile(base+suffix, b, 0o600); err != nil {
			tb.Fatalf("dbtemplate: %v", err)
		}
	}
}

// load builds the database in a directory of its own and reads its files.
func (t *Template) load() {
	dir, err := os.MkdirTemp("", "memnode-dbtemplate-")
	if err != nil {
		t.err = err
		return
	}
	defer os.RemoveAll(dir)
	if err := t.build(filepath.Join(dir, stem+".db")); err != nil {
		t.err = fmt.Errorf("build: %w", err)
		return
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.err = err
		return
	}
	t.files = map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), stem+".") {
			t.err = fmt.Errorf("build left %s, not a file named %s.*", e.Name(), stem)
			return
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.err = err
			return
		}
		t.files[strings.TrimPrefix(e.Name(), stem)] = b
	}
	if _, ok := t.files[".db"]; !ok {
		t.err = fmt.Errorf("build made no %s.db", stem)
	}
}

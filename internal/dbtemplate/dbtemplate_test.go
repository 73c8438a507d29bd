package dbtemplate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fatals records Fatalf instead of ending the test.
type fatals struct{ msgs []string }

func (f *fatals) Helper() {}
func (f *fatals) Fatalf(format string, args ...any) {
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

func TestPlaceBuildsOnceAndCopiesUnderTheNewName(t *testing.T) {
	builds := 0
	tmpl := New(func(path string) error {
		builds++
		if err := os.WriteFile(path, []byte("main "+filepath.Base(path)), 0o644); err != nil {
			return err
		}
		return os.WriteFile(strings.TrimSuffix(path, ".db")+".queue.db", []byte("queue"), 0o644)
	})
	dir := t.TempDir()
	for _, name := range []string{"a.db", "b.db"} {
		tmpl.Place(t, filepath.Join(dir, name))
	}
	if builds != 1 {
		t.Fatalf("built %d times, want once", builds)
	}
	for name, want := range map[string]string{"a.db": "main t.db", "a.queue.db": "queue", "b.db": "main t.db", "b.queue.db": "queue"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Fatalf("%s = %q, %v; want %q", name, b, err, want)
		}
		if fi, _ := os.Stat(filepath.Join(dir, name)); fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s has mode %v, want 0600", name, fi.Mode().Perm())
		}
	}
}

func TestPlaceKeepsAnExistingDatabase(t *testing.T) {
	tmpl := New(func(path string) error { return os.WriteFile(path, []byte("template"), 0o600) })
	path := filepath.Join(t.TempDir(), "kept.db")
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	tmpl.Place(t, path)
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Fatalf("an existing database was replaced: %q", b)
	}
}

func TestPlaceFailsWhenTheBuildFails(t *testing.T) {
	tmpl := New(func(string) error { return errors.New("no schema") })
	var f fatals
	tmpl.Place(&f, filepath.Join(t.TempDir(), "x.db"))
	tmpl.Place(&f, filepath.Join(t.TempDir(), "y.db"))
	if len(f.msgs) != 2 || !strings.Contains(f.msgs[0], "no schema") {
		t.Fatalf("fatals %q, want the build's error at each Place", f.msgs)
	}
}

package configs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSettingsFileReadAndWrite: an editor reads "{}" for a missing or broken file, a file
// the node would refuse is an *InvalidFileError and leaves the file as it was, a good one is
// written indented and 0600.
func TestSettingsFileReadAndWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	if b, err := ReadFile(dir); err != nil || string(b) != "{}" {
		t.Fatalf("missing file: %s %v", b, err)
	}
	if err := os.WriteFile(path, []byte(`{"port": `), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(dir); err != nil || string(b) != "{}" {
		t.Fatalf("broken file: %s %v", b, err)
	}
	var inv *InvalidFileError
	if err := WriteFile(dir, []byte(`{"no_such_setting": 1}`)); !errors.As(err, &inv) {
		t.Fatalf("unknown key: %v, want an InvalidFileError", err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"port": ` {
		t.Fatalf("a refused file was written: %s", b)
	}
	if err := WriteFile(dir, []byte(`{"workers":3}`)); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(dir)
	if err != nil || string(b) != "{\n  \"workers\": 3\n}\n" {
		t.Fatalf("written: %q %v", b, err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
}

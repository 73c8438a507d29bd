package platformtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to path with mode, creating its directory: a user's config file
// as they left it, before an installer test runs.
func WriteFile(tb testing.TB, path, content string, mode os.FileMode) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		tb.Fatal(err)
	}
}

// ReadJSON reads path as a JSON object; a file that is not one fails the test, naming it
// and showing its bytes.
func ReadJSON(tb testing.TB, path string) map[string]any {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("%s: %v\n%s", path, err, b)
	}
	return m
}

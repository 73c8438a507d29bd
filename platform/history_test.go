package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSessionFiles: the session files below a folder, oldest first, since a time; a missing
// folder is one clear error.
func TestSessionFiles(t *testing.T) {
	h := History{IsSession: func(rel string) bool { return strings.HasSuffix(rel, ".jsonl") }}
	dir := t.TempDir()
	now := time.Now()
	for i, f := range []string{"b/new.jsonl", "a/old.jsonl", "a/skip.txt"} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, nil, 0o600)
		at := now.Add(-time.Duration(i) * time.Hour)
		os.Chtimes(p, at, at)
	}
	files, err := h.SessionFiles(dir, 0)
	if err != nil || len(files) != 2 || !strings.HasSuffix(files[0], "old.jsonl") || !strings.HasSuffix(files[1], "new.jsonl") {
		t.Errorf("SessionFiles = %v, %v", files, err)
	}
	if files, _ := h.SessionFiles(dir, now.Add(-30*time.Minute).UnixMilli()); len(files) != 1 {
		t.Errorf("since half an hour: %v", files)
	}
	_, err = h.SessionFiles(filepath.Join(dir, "nope"), 0)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || strings.Contains(err.Error(), "\n") {
		t.Errorf("a missing folder: %v", err)
	}
}

package node

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/memory"
)

// TestViewerSettingsSavedAndValidated: the viewer's save writes settings.json only when the
// node's own Validate accepts it; a bad value is ErrInvalid and leaves the file as it was.
func TestViewerSettingsSavedAndValidated(t *testing.T) {
	dir := t.TempDir()
	n, err := New(Config{DataDir: dir, Settings: configs.Default()})
	if err != nil {
		t.Fatal(err)
	}
	v := viewerBackend{n}
	ctx := context.Background()
	st, err := v.Settings(ctx)
	if err != nil || string(st.File) != "{}" || len(st.Fields) < 20 {
		t.Fatalf("settings without a file: %s, %d fields, %v", st.File, len(st.Fields), err)
	}
	if _, err := v.SaveSettings(ctx, json.RawMessage(`{"workers": 3, "device_name": "laptop"}`)); err != nil {
		t.Fatal(err)
	}
	path := datadir.Dir(dir).Settings()
	got, err := configs.Load(dir)
	if err != nil || got.Workers != 3 || got.DeviceName != "laptop" {
		t.Fatalf("saved settings read back: %+v %v", got, err)
	}
	before, _ := os.ReadFile(path)
	for _, bad := range []string{`{"workers": 0}`, `{"no_such_setting": 1}`, `{"transport": "carrier-pigeon"}`} {
		_, err := v.SaveSettings(ctx, json.RawMessage(bad))
		if !errors.Is(err, memory.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", bad, err)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatalf("a refused save changed the file:\n%s", after)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("settings.json mode %v", fi.Mode())
	}
}

// TestViewerLogTail: the logs page gets the last lines, a missing log is not an error to
// the route (it answers an empty list).
func TestViewerLogTail(t *testing.T) {
	dir := t.TempDir()
	n, err := New(Config{DataDir: dir, Settings: configs.Default()})
	if err != nil {
		t.Fatal(err)
	}
	v := viewerBackend{n}
	if _, err := v.Log(context.Background(), "node", 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing log: %v", err)
	}
	var lines []string
	for i := range 3000 {
		lines = append(lines, "level=INFO msg=line"+strings.Repeat("x", i%300))
	}
	lines = append(lines, "level=ERROR msg=last")
	if err := os.MkdirAll(filepath.Dir(datadir.Dir(dir).NodeLog()), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(datadir.Dir(dir).NodeLog(), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := v.Log(context.Background(), "node", 50)
	if err != nil || len(l.Lines) != 50 || l.Lines[49] != "level=ERROR msg=last" {
		t.Fatalf("tail: %d lines, last %q, %v", len(l.Lines), l.Lines[len(l.Lines)-1], err)
	}
	l, _ = v.Log(context.Background(), "node", 5000)
	if !strings.HasPrefix(l.Lines[0], "level=INFO") {
		t.Fatalf("tail starts mid-line: %q", l.Lines[0])
	}
}

package logfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriterCapsLinesAndRotates: a 20 MiB line is cut to the cap; writing far past the
// size cap leaves the log and its one old generation under it each.
func TestWriterCapsLinesAndRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.log")
	w, err := Open(path, 64<<10, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	rotated := 0
	w.OnRotate = func(*os.File) { rotated++ }
	huge := append(bytes.Repeat([]byte("x"), 20<<20), '\n')
	for range 200 {
		if n, err := w.Write(huge); err != nil || n != len(huge) {
			t.Fatalf("write: %d, %v", n, err)
		}
		w.Write([]byte("short line\nanother\n"))
	}
	w.Close()
	for _, p := range []string{path, path + ".1"} {
		fi, err := os.Stat(p)
		if err != nil || fi.Size() > 64<<10 || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, %v", p, fi, err)
		}
		b, _ := os.ReadFile(p)
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if len(l)+1 > 1<<10 {
				t.Fatalf("%s: a line of %d bytes", p, len(l))
			}
		}
		if !strings.Contains(string(b), "short line\nanother\n") || !strings.Contains(string(b), truncMark) {
			t.Fatalf("%s lost the short lines or the mark", p)
		}
	}
	if rotated == 0 {
		t.Fatal("never rotated")
	}
}

func TestAppendLineRotates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hook.log")
	for range 100 {
		if err := AppendLine(path, append(bytes.Repeat([]byte("y"), 1<<20), '\n'), 16<<10, 4<<10); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, path + ".1"} {
		if fi, err := os.Stat(p); err != nil || fi.Size() > 16<<10+4<<10 {
			t.Fatalf("%s: %v, %v", p, fi, err)
		}
	}
}

func FuzzCap(f *testing.F) {
	f.Add([]byte("a\nbb\nccc"), 5)
	f.Fuzz(func(t *testing.T, p []byte, max int) {
		if max < len(truncMark)+2 || max > 1<<16 {
			return
		}
		out := Cap(p, max)
		for _, l := range bytes.SplitAfter(out, []byte("\n")) {
			if len(l) > max {
				t.Fatalf("line of %d > %d", len(l), max)
			}
		}
		if bytes.Count(out, []byte("\n")) != bytes.Count(p, []byte("\n")) {
			t.Fatal("line count changed")
		}
	})
}

// TestTail: the viewer's logs page reads a log's last lines, from a line boundary when the
// read starts mid-file, and an empty log as no lines.
func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.log")
	if _, err := Tail(path, 1024, 10); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing log: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Tail(path, 1024, 10); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty log: %q %v", got, err)
	}
	if err := os.WriteFile(path, []byte("first line\nsecond\nthird\nfourth\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Tail(path, 1024, 2); err != nil || strings.Join(got, "|") != "third|fourth" {
		t.Fatalf("last 2: %q %v", got, err)
	}
	// 16 bytes from the end start inside "second": the torn line is left out.
	if got, err := Tail(path, 16, 10); err != nil || strings.Join(got, "|") != "third|fourth" {
		t.Fatalf("16 bytes: %q %v", got, err)
	}
}

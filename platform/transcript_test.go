package platform

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenTranscriptRefusesFIFO: a FIFO (no writer: a blocking open would wait forever)
// and a directory are refused at once; a regular file opens.
func TestOpenTranscriptRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "t.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, p := range []string{fifo, dir} {
		if f, err := OpenTranscript(p); !errors.Is(err, ErrNotRegular) {
			if f != nil {
				f.Close()
			}
			t.Fatalf("%s: %v, want ErrNotRegular", p, err)
		}
	}
	reg := filepath.Join(dir, "r.jsonl")
	os.WriteFile(reg, []byte("{}\n"), 0o600)
	f, err := OpenTranscript(reg)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

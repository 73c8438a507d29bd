// Package logfile is every log file memnode writes: each line capped in size, the file
// rotated (to NAME.1, one generation kept) when it reaches its size cap, so no input — a
// 20 MiB session ID retried forever — can fill the disk through a log.
package logfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// Defaults: a log and its one old generation stay under 2 × MaxBytes.
const (
	DefaultMaxBytes = 10 << 20
	DefaultMaxLine  = 8 << 10
)

// truncMark ends a line cut at MaxLine.
const truncMark = "…[memnode: line truncated]"

// Writer appends lines to a file. Each Write is one line or more (slog writes one record
// per call); a line longer than MaxLine is cut. Safe for concurrent use.
type Writer struct {
	path     string
	maxBytes int64
	maxLine  int
	// OnRotate, when set, is called with the new file after a rotation (the node points
	// its stdout and stderr at it, so a panic's trace lands in the current log).
	OnRotate func(*os.File)

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (creating, 0600) the log at path for appending. maxBytes ≤ 0 and maxLine ≤ 0
// take the defaults.
func Open(path string, maxBytes int64, maxLine int) (*Writer, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	w := &Writer{path: path, maxBytes: maxBytes, maxLine: maxLine}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open log: %w", err)
	}
	w.f, w.size = f, fi.Size()
	return nil
}

// Cap cuts every line of p longer than maxLine, keeping its start.
func Cap(p []byte, maxLine int) []byte {
	if len(p) <= maxLine {
		return p
	}
	var out []byte
	for len(p) > 0 {
		line := p
		rest := []byte(nil)
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			line, rest = p[:i+1], p[i+1:]
		}
		if len(line) > maxLine {
			nl := 0
			if line[len(line)-1] == '\n' {
				nl = 1
			}
			out = append(append(out, line[:maxLine-len(truncMark)-nl]...), truncMark...)
			if nl == 1 {
				out = append(out, '\n')
			}
		} else {
			out = append(out, line...)
		}
		p = rest
	}
	return out
}

// Write appends p (its long lines cut), rotating first when the file would pass its cap.
// It reports len(p) written when it wrote the capped bytes.
func (w *Writer) Write(p []byte) (int, error) {
	b := Cap(p, w.maxLine)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return 0, fs.ErrClosed
	}
	if w.size > 0 && w.size+int64(len(b)) > w.maxBytes {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := w.f.Write(b)
	w.size += int64(n)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// rotate renames the log to NAME.1 (replacing the older one) and starts a new file.
func (w *Writer) rotate() error {
	if err := os.Rename(w.path, w.path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rotate log: %w", err)
	}
	old := w.f
	if err := w.open(); err != nil {
		w.f = old
		return err
	}
	if w.OnRotate != nil {
		w.OnRotate(w.f)
	}
	old.Close()
	return nil
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// AppendLine appends one line to the log at path for a short-lived process (a hook): the
// line capped at maxLine, the file rotated first when it has reached maxBytes.
func AppendLine(path string, line []byte, maxBytes int64, maxLine int) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() >= maxBytes {
		// Two hooks may rotate at once: the second rename moves a fresh, small file.
		if err := os.Rename(path, path+".1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("rotate log: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	_, err = f.Write(Cap(line, maxLine))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// capped cuts the long lines of every Write to w.
type capped struct {
	w       io.Writer
	maxLine int
}

// Capped returns a writer that cuts every line written through it at maxLine (≤ 0: the
// default): for a log that is not a file memnode owns (a terminal, a pipe).
func Capped(w io.Writer, maxLine int) io.Writer {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &capped{w: w, maxLine: maxLine}
}

func (c *capped) Write(p []byte) (int, error) {
	if _, err := c.w.Write(Cap(p, c.maxLine)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Tail returns the last lines (at most lines of them) of the log at path, reading at most limit bytes
// from its end and starting at a line boundary; none ([]string{}, not nil) for an empty log.
func Tail(path string, limit int64, lines int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := fi.Size() - limit
	if off < 0 {
		off = 0
	}
	b, err := io.ReadAll(io.NewSectionReader(f, off, fi.Size()-off))
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	if off > 0 {
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) == 1 && all[0] == "" {
		return []string{}, nil
	}
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return all, nil
}

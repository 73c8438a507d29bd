// Package contextfile keeps memnode's block in an agent's rules or context file
// (.cursor/rules/memnode-context.mdc, .windsurf/rules/memnode-context.md, GEMINI.md, …) for
// agents that have no API to inject context at session start. The block sits between
// memnode's markers; the user's own text around it is never touched; writes are atomic and
// bounded; removal takes out the block and deletes the file only when memnode created it
// and nothing else is left in it. See DESIGN.md for where and when the node writes it.
package contextfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/privacy"
)

// Spec is one agent's context file.
type Spec struct {
	// Path is relative to the project root, slash-separated: ".cursor/rules/memnode-context.mdc".
	Path string
	// Header is written above the block when memnode creates the file (the .mdc front
	// matter with alwaysApply: true); "" for none. A file the user created keeps its own top.
	Header string
}

// Zero reports whether the platform has no context file.
func (s Spec) Zero() bool { return s.Path == "" }

// File is the spec's file in project root.
func (s Spec) File(root string) string { return filepath.Join(root, filepath.FromSlash(s.Path)) }

// Markers around memnode's block. The begin line carries two facts Remove needs to give
// back the user's exact bytes: "created-file" when memnode created the file (deleted on
// removal when nothing but memnode's own header is left), and "sep=N" when Write appended
// the block after N separator bytes it added (a newline, a blank line).
const (
	beginMarker = "<!-- memnode:begin"
	beginTail   = " — written by memnode from this project's memory; edits inside are overwritten -->"
	endLine     = "<!-- memnode:end -->"
)

// begin is the begin line with its facts.
func begin(created bool, sep int) string {
	s := beginMarker
	if created {
		s += " created-file"
	}
	if sep > 0 {
		s += " sep=" + strconv.Itoa(sep)
	}
	return s + beginTail
}

// beginFacts reads the facts of a begin line.
func beginFacts(line string) (created bool, sep int) {
	attrs, _, _ := strings.Cut(strings.TrimPrefix(line, beginMarker), "—")
	for _, f := range strings.Fields(attrs) {
		switch {
		case f == "created-file":
			created = true
		case strings.HasPrefix(f, "sep="):
			if n, err := strconv.Atoi(strings.TrimPrefix(f, "sep=")); err == nil && n >= 0 && n <= 2 {
				sep = n
			}
		}
	}
	return created, sep
}

// MaxBytes bounds the block's body: a rules file is read into every session's context.
const MaxBytes = 16 << 10

// ErrMarkers means the file has a begin marker without an end marker (or the reverse): the
// file is left alone rather than guessed at.
var ErrMarkers = errors.New("unbalanced memnode markers")

// Actions Write and Remove report.
const (
	Created   = "created"
	Updated   = "updated"
	Unchanged = "unchanged"
	Removed   = "removed"
	Absent    = "absent"
)

// Write puts body (cut to MaxBytes at a line end) between memnode's markers in path:
// replacing the block that is there, appending one to a file without it, or creating the
// file (with the spec's header) when there is none. It reports Created, Updated or
// Unchanged. An empty body writes an empty block: the file stays, so an agent's rule list
// does not flicker.
func Write(path string, spec Spec, body string) (string, error) {
	body = bound(strings.TrimSpace(body), MaxBytes)
	old, mode, exists, err := read(path)
	if err != nil {
		return "", err
	}
	var out []byte
	action := Updated
	if !exists {
		action = Created
		var b bytes.Buffer
		if spec.Header != "" {
			b.WriteString(strings.TrimRight(spec.Header, "\n") + "\n\n")
		}
		b.Write(block(begin(true, 0), body))
		out = b.Bytes()
	} else {
		start, end, created, sep, err := locate(old)
		if err != nil {
			return "", fmt.Errorf("%s: %w (fix or remove the markers)", path, err)
		}
		if start < 0 {
			var add []byte
			if len(old) > 0 && !bytes.HasSuffix(old, []byte("\n")) {
				add = append(add, '\n')
			}
			if len(bytes.TrimSpace(old)) > 0 {
				add = append(add, '\n')
			}
			out = append(append(append([]byte{}, old...), add...), block(begin(false, len(add)), body)...)
		} else {
			out = append(append(append([]byte{}, old[:start]...), block(begin(created, sep), body)...), old[end:]...)
		}
		if bytes.Equal(out, old) {
			return Unchanged, nil
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	if err := atomicfile.Write(path, out, mode); err != nil {
		return "", err
	}
	return action, nil
}

// Remove takes memnode's block out of path. The file is deleted when memnode created it and
// only memnode's header (or nothing) is left; otherwise the user's text stays byte for byte,
// less the block and the blank line Write put before it. It reports Removed, Updated,
// Unchanged (no block) or Absent (no file).
func Remove(path string, spec Spec) (string, error) {
	old, mode, exists, err := read(path)
	if err != nil || !exists {
		return Absent, err
	}
	start, end, created, sep, err := locate(old)
	if err != nil {
		return "", fmt.Errorf("%s: %w (fix or remove the markers)", path, err)
	}
	if start < 0 {
		return Unchanged, nil
	}
	pre, post := old[:start], old[end:]
	if sep > 0 && len(post) == 0 && len(pre) >= sep && strings.Trim(string(pre[len(pre)-sep:]), "\n") == "" {
		pre = pre[:len(pre)-sep] // the separator Write added before the block it appended
	}
	rest := append(append([]byte{}, pre...), post...)
	if created {
		left := strings.TrimSpace(string(rest))
		if left == "" || left == strings.TrimSpace(spec.Header) {
			if err := os.Remove(path); err != nil {
				return "", fmt.Errorf("remove %s: %w", path, err)
			}
			return Removed, nil
		}
	}
	if err := atomicfile.Write(path, rest, mode); err != nil {
		return "", err
	}
	return Updated, nil
}

func read(path string) (data []byte, mode fs.FileMode, exists bool, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o644, false, nil // a rules file the project may commit: not private
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, false, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, false, fmt.Errorf("read %s: %w", path, err)
	}
	return b, fi.Mode().Perm(), true, nil
}

// block is memnode's section: the begin line, the body, the end line.
func block(first, body string) []byte {
	if body == "" {
		return []byte(first + "\n" + endLine + "\n")
	}
	return []byte(first + "\n" + body + "\n" + endLine + "\n")
}

// locate finds the block: the byte offset of its begin line and the offset just past its
// end line (and its newline), or start -1 when there is none; and its begin line's facts.
func locate(b []byte) (start, end int, created bool, sep int, err error) {
	start = -1
	off := 0
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		t := string(bytes.TrimSpace(line))
		switch {
		case start < 0 && strings.HasPrefix(t, beginMarker):
			start = off
			created, sep = beginFacts(t)
		case start >= 0 && t == endLine:
			return start, off + len(line), created, sep, nil
		case start < 0 && t == endLine:
			return 0, 0, false, 0, ErrMarkers
		}
		off += len(line)
	}
	if start >= 0 {
		return 0, 0, false, 0, ErrMarkers
	}
	return -1, -1, false, 0, nil
}

// bound cuts s to at most n bytes, at the last line end that fits (or a rune boundary),
// and says so. A cut context block gets its closing tag back, so the privacy filter still
// sees a pair when an agent quotes the file.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	more := "\n… (cut: the rest is in memnode — use its search tool)"
	closing := "\n</" + privacy.ContextTag + ">"
	cut := s[:n-len(more)-len(closing)]
	if i := strings.LastIndexByte(cut, '\n'); i > 0 {
		cut = cut[:i]
	}
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if strings.Contains(cut, "<"+privacy.ContextTag+">") && !strings.Contains(cut, closing[1:]) {
		return cut + more + closing
	}
	return cut + more
}

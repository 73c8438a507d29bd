package contextfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/memnode/memnode/internal/atomicfile"
)

// Target is one project directory whose context file of one platform memnode keeps.
type Target struct {
	Platform string `json:"platform"`
	Project  string `json:"project"`
	// Root is the project's directory (absolute): the file is Spec.File(Root).
	Root string `json:"root"`
}

// MaxTargets bounds the targets file; the oldest entries go first.
const MaxTargets = 1024

// targetsFile is the on-disk shape of <data dir>/state/context-files.json.
type targetsFile struct {
	V       int      `json:"v"`
	Targets []Target `json:"targets"`
}

// LoadTargets reads the targets file; a missing file is an empty list.
func LoadTargets(path string) ([]Target, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read context targets: %w", err)
	}
	var f targetsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("decode context targets %s: %w", path, err)
	}
	return f.Targets, nil
}

// SaveTargets replaces the targets file (0600: it names the user's project directories).
func SaveTargets(path string, ts []Target) error {
	if len(ts) > MaxTargets {
		ts = ts[len(ts)-MaxTargets:]
	}
	b, err := json.MarshalIndent(targetsFile{V: 1, Targets: ts}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode context targets: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	return atomicfile.Write(path, append(b, '\n'), 0o600)
}

// AddTarget records t once; it reports whether t was new.
func AddTarget(path string, t Target) (bool, error) {
	ts, err := LoadTargets(path)
	if err != nil {
		return false, err
	}
	if slices.Contains(ts, t) {
		return false, nil
	}
	return true, SaveTargets(path, append(ts, t))
}

// DropTargets removes the targets drop selects and returns them.
func DropTargets(path string, drop func(Target) bool) ([]Target, error) {
	ts, err := LoadTargets(path)
	if err != nil {
		return nil, err
	}
	var kept, gone []Target
	for _, t := range ts {
		if drop(t) {
			gone = append(gone, t)
		} else {
			kept = append(kept, t)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	return gone, SaveTargets(path, kept)
}

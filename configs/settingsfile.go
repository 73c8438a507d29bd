package configs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/internal/datadir"
)

// InvalidFileError is a settings file a node would refuse: not JSON, an unknown key, or a
// setting out of range. Its text is the cause alone.
type InvalidFileError struct{ Err error }

func (e *InvalidFileError) Error() string { return e.Err.Error() }
func (e *InvalidFileError) Unwrap() error { return e.Err }

// ReadFile returns dataDir/settings.json as written, for an editor to show: "{}" when there
// is none, or when it is not JSON (a node could not have started with it; the editor starts
// afresh).
func ReadFile(dataDir string) ([]byte, error) {
	file, err := os.ReadFile(datadir.Dir(dataDir).Settings())
	if errors.Is(err, fs.ErrNotExist) {
		return []byte("{}"), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	if !json.Valid(file) {
		return []byte("{}"), nil
	}
	return file, nil
}

// WriteFile checks file with a node's own rules (ParseFile; an *InvalidFileError when it
// fails) and writes it, indented, as dataDir/settings.json (0600, atomically).
func WriteFile(dataDir string, file []byte) error {
	if _, err := ParseFile(file); err != nil {
		return &InvalidFileError{Err: err}
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, file, "", "  "); err != nil {
		return &InvalidFileError{Err: err}
	}
	pretty.WriteByte('\n')
	if err := atomicfile.Write(datadir.Dir(dataDir).Settings(), pretty.Bytes(), 0o600); err != nil {
		return fmt.Errorf("write settings: %w", err)
	}
	return nil
}

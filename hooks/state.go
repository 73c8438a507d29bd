package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/internal/datadir"
)

// failureState is DataDir/state/hook-failures.json: consecutive hooks that could not reach
// the node. Concurrent hooks may race on it; an off-by-one only shifts when the warning
// appears.
type failureState struct {
	ConsecutiveFailures int       `json:"consecutive_failures"`
	LastFailureAt       time.Time `json:"last_failure_at,omitzero"`
}

func failuresPath(dataDir string) string {
	return datadir.Dir(dataDir).HookFailures()
}

func readFailures(dataDir string) failureState {
	var st failureState
	b, err := os.ReadFile(failuresPath(dataDir))
	if err != nil || json.Unmarshal(b, &st) != nil || st.ConsecutiveFailures < 0 {
		return failureState{}
	}
	return st
}

// recordFailure increments the counter and returns its new value.
func recordFailure(dataDir string, now time.Time) (int, error) {
	st := readFailures(dataDir)
	st.ConsecutiveFailures++
	st.LastFailureAt = now.UTC()
	if err := writeFileAtomic(failuresPath(dataDir), st); err != nil {
		return 0, err
	}
	return st.ConsecutiveFailures, nil
}

// resetFailures zeroes the counter; the happy path costs one failed stat.
func resetFailures(dataDir string) error {
	err := os.Remove(failuresPath(dataDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reset hook failures: %w", err)
	}
	return nil
}

// writeFileAtomic writes v as JSON via temp file, fsync and rename.
func writeFileAtomic(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(name), err)
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return fmt.Errorf("create state dir: %w", err)
	}
	return atomicfile.Write(name, b, 0o600)
}

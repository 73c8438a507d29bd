package replica

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/memnode/memnode/memory"
)

// storageFull wraps err with memory.ErrStorageFull when it says the disk is full
// (SQLITE_FULL, or ENOSPC/EDQUOT from the file system), so callers can tell "free some
// space" from a broken database.
func storageFull(err error) error {
	if err == nil || errors.Is(err, memory.ErrStorageFull) {
		return err
	}
	if sqliteFull(err) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", memory.ErrStorageFull, err)
	}
	return err
}

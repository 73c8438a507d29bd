package replica

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/mattn/go-sqlite3"

	"github.com/memnode/memnode/memory"
)

// storageFull wraps err with memory.ErrStorageFull when it says the disk is full
// (SQLITE_FULL, or ENOSPC/EDQUOT from the file system), so callers can tell "free some
// space" from a broken database.
func storageFull(err error) error {
	if err == nil || errors.Is(err, memory.ErrStorageFull) {
		return err
	}
	var se sqlite3.Error
	full := errors.As(err, &se) && (se.Code == sqlite3.ErrFull || se.SystemErrno == syscall.ENOSPC || se.SystemErrno == syscall.EDQUOT)
	if full || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("%w: %w", memory.ErrStorageFull, err)
	}
	return err
}

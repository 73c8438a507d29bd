//go:build cgo

package replica

import (
	"errors"
	"syscall"

	"github.com/mattn/go-sqlite3"
)

// The result codes memnode tells apart. go-sqlite3 defines its error type only with cgo; the
// !cgo twin (sqliteerr_nocgo.go) lets every package type-check with CGO_ENABLED=0, which
// `make lint` does for darwin.

// sqliteFull reports whether err is SQLite's SQLITE_FULL or carries ENOSPC/EDQUOT.
func sqliteFull(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrFull || se.SystemErrno == syscall.ENOSPC || se.SystemErrno == syscall.EDQUOT)
}

// sqliteCorrupt reports whether err is SQLite's SQLITE_CORRUPT or SQLITE_NOTADB.
func sqliteCorrupt(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrCorrupt || se.Code == sqlite3.ErrNotADB)
}

// sqliteBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED.
func sqliteBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

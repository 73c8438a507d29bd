//go:build !cgo

package replica

// Without cgo go-sqlite3 is a stub that opens nothing, so no SQLite error can occur; these
// exist so every package type-checks with CGO_ENABLED=0 (make lint's darwin check).

func sqliteFull(error) bool    { return false }
func sqliteCorrupt(error) bool { return false }
func sqliteBusy(error) bool    { return false }

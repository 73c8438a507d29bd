package replica

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrCorrupt is returned by Open when the database file fails SQLite's quick_check (or is
// not a database at all). README "Troubleshooting" gives the repair steps.
var ErrCorrupt = errors.New("the database file is corrupt")

// quickCheckLines bounds how many of quick_check's findings the error quotes.
const quickCheckLines = 3

// checkIntegrity runs PRAGMA quick_check (O(N) in the file size, without the index
// cross-checks of integrity_check): a corrupt file is refused at open instead of serving
// 500s and taking new writes into broken pages.
func (r *Replica) checkIntegrity(ctx context.Context) error {
	rows, err := r.w.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return corruptOr(fmt.Errorf("open replica: %w", err))
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return corruptOr(fmt.Errorf("open replica: quick_check: %w", err))
		}
		if line != "ok" && len(found) < quickCheckLines {
			found = append(found, line)
		}
	}
	if err := rows.Err(); err != nil {
		return corruptOr(fmt.Errorf("open replica: quick_check: %w", err))
	}
	if len(found) > 0 {
		return fmt.Errorf("%w (quick_check: %s)", ErrCorrupt, strings.Join(found, "; "))
	}
	return nil
}

// corruptOr wraps err in ErrCorrupt when SQLite reported a corrupt or non-database file.
func corruptOr(err error) error {
	if IsCorrupt(err) && !errors.Is(err, ErrCorrupt) {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return err
}

// IsCorrupt reports whether err is, or wraps, SQLite's SQLITE_CORRUPT or SQLITE_NOTADB.
func IsCorrupt(err error) bool {
	if errors.Is(err, ErrCorrupt) {
		return true
	}
	return sqliteCorrupt(err)
}

package replica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ErrCorrupt is returned by Open when the database file fails the open's check (checkOpen),
// or is not a database at all, and by CheckIntegrity when SQLite's quick_check fails. README "Troubleshooting" gives the repair steps.
var ErrCorrupt = errors.New("the database file is corrupt")

// quickCheckLines bounds how many of quick_check's findings the error quotes.
const quickCheckLines = 3

// checkOpen is the integrity check of every open, proportionate to start-up rather than to
// the data (issue 29: the full quick_check it replaced took 8.3 s at 1M observations): the
// file's header (an SQLite file, a valid page size, not shorter than the header says),
// the schema (read whole by SQLite), the WAL of the last run checkpointed into the file
// (bounded by that WAL), and the root page of every table and index (a b-tree page with a
// sane header). It finds a file that is not a database, a truncated file, a damaged schema
// and damaged roots at once; damage deeper in a b-tree is CheckIntegrity's, which the node
// runs in the background after it is ready and `memnode repair` runs before it decides.
func (r *Replica) checkOpen(ctx context.Context) error {
	pageSize, err := checkHeader(r.cfg.Path)
	if err != nil || pageSize == 0 { // 0: a new, empty file
		return err
	}
	var roots []int64
	rows, err := r.w.QueryContext(ctx, "SELECT rootpage FROM sqlite_schema WHERE rootpage > 0")
	if err != nil {
		return corruptOr(fmt.Errorf("open replica: read the schema: %w", err))
	}
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return corruptOr(fmt.Errorf("open replica: read the schema: %w", err))
		}
		roots = append(roots, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return corruptOr(fmt.Errorf("open replica: read the schema: %w", err))
	}
	// The roots are read from the file itself: first the last run's WAL goes into it. PASSIVE
	// waits for no one: another program holding the database (a sqlite3 shell in a
	// transaction) leaves frames behind, and the roots go unchecked this time rather than
	// the open waiting (the migration then names the holder).
	var busy, logFrames, done int
	if err := r.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logFrames, &done); err != nil {
		return corruptOr(fmt.Errorf("open replica: checkpoint: %w", err))
	}
	if busy != 0 || done < logFrames {
		r.log.Warn("integrity check at open: another connection holds the WAL; root pages not checked", "frames", logFrames, "checkpointed", done)
		return nil
	}
	return checkRoots(r.cfg.Path, pageSize, roots)
}

// sqliteMagic opens every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// checkHeader reads the database header (the first 100 bytes): it returns the page size, or
// 0 for a file that is still empty, and ErrCorrupt for a file that is not a database or is
// shorter than its header says.
func checkHeader(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open replica: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("open replica: %w", err)
	}
	if fi.Size() == 0 {
		return 0, nil
	}
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:16]) != sqliteMagic {
		return 0, fmt.Errorf("%w: %s is not an SQLite database (its header is not SQLite's)", ErrCorrupt, filepath.Base(path))
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return 0, fmt.Errorf("%w: the header names page size %d", ErrCorrupt, pageSize)
	}
	// The page count in the header is valid when the change counter matches the
	// version-valid-for number (SQLite ≥ 3.7.0 writes both).
	pages := int64(binary.BigEndian.Uint32(h[28:32]))
	if binary.BigEndian.Uint32(h[24:28]) == binary.BigEndian.Uint32(h[92:96]) && pages*pageSize > fi.Size() {
		return 0, fmt.Errorf("%w: the file holds %d bytes, its header counts %d pages of %d (truncated)", ErrCorrupt, fi.Size(), pages, pageSize)
	}
	return pageSize, nil
}

// checkRoots reads each root page from the file and checks it is a b-tree page: its type
// byte one of SQLite's four, its cell pointers and its cell content area inside the page.
func checkRoots(path string, pageSize int64, roots []int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open replica: %w", err)
	}
	defer f.Close()
	page := make([]byte, pageSize)
	for _, p := range roots {
		if _, err := f.ReadAt(page, (p-1)*pageSize); err != nil {
			return fmt.Errorf("%w: root page %d does not read: %v", ErrCorrupt, p, err)
		}
		if err := checkBtreePage(page, p); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
	}
	return nil
}

// checkBtreePage checks the header of b-tree page number p (page 1's starts after the
// database header).
func checkBtreePage(page []byte, p int64) error {
	off := 0
	if p == 1 {
		off = 100
	}
	h := page[off:]
	hdr := 8
	switch h[0] {
	case 0x0d, 0x0a: // table leaf, index leaf
	case 0x05, 0x02: // table interior, index interior
		hdr = 12
	default:
		return fmt.Errorf("root page %d is not a b-tree page (type byte 0x%02x)", p, h[0])
	}
	cells := int(binary.BigEndian.Uint16(h[3:5]))
	content := int(binary.BigEndian.Uint16(h[5:7]))
	if content == 0 {
		content = 65536
	}
	if off+hdr+2*cells > len(page) || content > len(page) || (cells > 0 && content < off+hdr+2*cells) {
		return fmt.Errorf("root page %d has a b-tree header out of its page (%d cells, content at %d)", p, cells, content)
	}
	return nil
}

// CheckIntegrity runs SQLite's PRAGMA quick_check over the whole file (O(N) in its size,
// without integrity_check's index cross-checks) on a read connection, so writers go on
// meanwhile: the full check that the open leaves out. It returns ErrCorrupt with the
// first findings.
func (r *Replica) CheckIntegrity(ctx context.Context) error {
	defer r.longRead()()
	conn, err := r.r.Conn(ctx)
	if err != nil {
		return fmt.Errorf("integrity check: %w", err)
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return corruptOr(fmt.Errorf("integrity check: %w", err))
	}
	defer rows.Close()
	var found []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return corruptOr(fmt.Errorf("integrity check: quick_check: %w", err))
		}
		if line != "ok" && len(found) < quickCheckLines {
			found = append(found, line)
		}
	}
	if err := rows.Err(); err != nil {
		return corruptOr(fmt.Errorf("integrity check: quick_check: %w", err))
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

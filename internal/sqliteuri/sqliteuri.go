// Package sqliteuri builds the "file:" URI through which every SQLite database of memnode is
// opened (go-sqlite3 reads its options from the URI's query).
//
// A path goes into the URI escaped: SQLite reads '%' as an escape, '?' as the start of the
// query and '#' as a fragment, so an unescaped "a#b/memnode.db" opens "a" — a file beside the
// data dir that every such dir shares. (Go names a fuzz seed's temp dir "…seed#0…"; a user's
// folder may hold any of the three.)
package sqliteuri

import (
	"net/url"
	"strings"
)

// File is SQLite's URI of the database file at path with the options q (nil: none).
func File(path string, q url.Values) string {
	// Exactly what SQLite's URI parser would not read as part of a path.
	u := "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

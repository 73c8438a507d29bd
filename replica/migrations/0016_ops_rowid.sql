-- memnode replica schema v16: the op-log as a rowid table naming its origin by number
-- (issue 29: bytes a record on disk). ops was WITHOUT ROWID keyed by (origin, seq): a table
-- stored as an index b-tree, where a row larger than about a quarter of a page (the payload
-- of a prompt, a summary, a session) spills to an overflow page it mostly leaves empty, and
-- every row and every ops_record entry held the origin, a 52-character peer ID (ops_record
-- carried the whole key: record_id, origin, seq). On the 100k make bench-scale dataset (one
-- origin, 123k ops): ops 38.8 MB, 15.0 of them unused, and ops_record 13.0 MB. Now an origin
-- is a row of origins, named by its number; ops is a rowid table with (origin_id, seq) its
-- unique index and ops_record carrying the rowid: 25.9 MB for the three (a copy in
-- (origin, seq) order with the indexes kept as rows arrive). The wire (sync, snapshots,
-- team) still names origins: only storage changes (replica/DESIGN.md "Schema").
-- The triggers on ops (counts, hlc_max) go with the old table and are made again.
-- Done in Go (opsByOriginID, migration 16's step): a database whose ops already names
-- origins by number (a test that rewinds schema_version runs this again) keeps it.
CREATE TABLE IF NOT EXISTS origins (
    id     INTEGER PRIMARY KEY,
    origin TEXT NOT NULL UNIQUE
);

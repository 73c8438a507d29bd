-- memnode replica schema v17: an observation's content hash as 16 bytes (issue 29: bytes a
-- record on disk). content_hash held HashContent's 32 hex digits, in the row and again in
-- the index observations_hash (session_id, content_hash): 36 bytes an observation on the
-- 100k make bench-scale dataset go with the hex. A hash in that form is now stored as a
-- BLOB of its 16 bytes; any other value (from a peer or an import) stays the text it is,
-- so everything reads back as stored (replica/contenthash.go). Only storage changes:
-- reads, exports, snapshots and op payloads carry the hex text.
-- Done in Go (packContentHashes, migration 17's step); a hash already packed is left as
-- it is, so the migration can run again.
SELECT 1;

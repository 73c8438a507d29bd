-- memnode replica schema v19: the content-hash index is clustered by session again (issue 29:
-- bytes written per record). Migration 18 keyed it by the hash alone: 26 instead of 61 bytes
-- an observation, but a random key, so an import batch or a snapshot chunk of 5,000–10,000
-- observations dirtied a page of it per row — at 1M observations most of its 26 MB in every
-- transaction, and `memnode import` of the 1M make bench-scale dataset wrote 5.9× the
-- database's size. It keys the session and the first 4 bytes of the hash: a session's rows
-- are neighbours (a batch touches the pages of its sessions), ~46 bytes an observation; the
-- lookup (dedupQuery) checks the whole hash in the row.
DROP INDEX IF EXISTS observations_hash;
CREATE INDEX observations_hash ON observations(session_id, substr(content_hash, 1, 4));

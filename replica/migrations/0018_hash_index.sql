-- memnode replica schema v18: observations_hash (session_id, content_hash) is dropped.
-- This migration first keyed the index by the hash alone (26 instead of 61 bytes an
-- observation); that key was random and an import batch rewrote most of the index per
-- transaction (5.9× the database's size written at 1M). Migration 19 makes the index again,
-- clustered by session: a database that ran this migration's first form has its hash-only
-- index replaced there, and one migrating from v17 now builds only migration 19's index
-- (building one here to drop it next cost seconds of the first open at 1M).
DROP INDEX IF EXISTS observations_hash;

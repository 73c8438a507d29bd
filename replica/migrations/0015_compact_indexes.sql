-- memnode replica schema v15: two derived indexes made compact (issue 29: bytes a record on
-- disk and written per record).

-- 1. Short IDs without a table (replica/DESIGN.md "Short IDs").
-- short_ids held every record's 12-character hash → its ID, keyed by the hash: random, so
-- once the table outgrew the writer's page cache each record stored rewrote a page of it
-- (issue 29: 122 bytes a record on disk, and most of an import's bytes written at 1M). The
-- in-memory index (shortid.go) is read from the record tables' own ID indexes instead, and
-- a prefix resolves to rowids, then IDs. Dropping the table frees its pages for later writes.
DROP TRIGGER IF EXISTS observations_short_ad;
DROP TRIGGER IF EXISTS prompts_short_ad;
DROP TRIGGER IF EXISTS summaries_short_ad;
DROP TABLE IF EXISTS short_ids;

-- 2. An observation's files name an interned path
-- (replica/DESIGN.md "File index"). observation_files held each path — and its basename,
-- indexed — once per observation that read or modified it, in three b-trees (the table keyed
-- by path, the name index, the observation index): 207 bytes an observation on the 100k
-- make bench-scale dataset, whose 168,659 rows name 2,553 paths. A path is now one
-- file_paths row (its name indexed), and observation_files holds integers. A path no
-- observation names any more is deleted with its last row (the trigger), so a forgotten
-- observation's paths leave the database with it.
-- Done in Go (internFilePaths, migration 15's step): a database whose observation_files
-- already names paths by id (a test that rewinds schema_version runs this again) keeps it.

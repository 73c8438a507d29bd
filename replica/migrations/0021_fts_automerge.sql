-- memnode replica schema v21: each full-text index merges its segments eight at a time instead
-- of FTS5's default four (issue 29: bytes written by an import). A merge rewrites every page
-- of the segments it merges, so with four a term's postings were rewritten once per level of
-- a four-way tree: memnode import of the 1M make bench-scale dataset (batches of 20,000, the
-- WAL checkpointed at 131,072 pages) wrote 6,877 MiB for a 1,943 MiB database with four and
-- 6,358 MiB with eight, and took 136 s instead of 122 s (quiet machine, 2026-12-05). (With the
-- earlier batches of 5,000 and 32,768 pages, no merges at all wrote 6,432 MiB against four's
-- 9,169.) The cost is more segments for a query to look a term up in (at most seven a level
-- instead of three): at 1M, 15 in the observations index instead of 11, and a search in the
-- largest project 3.7 → 5.7 ms p50.
INSERT INTO observations_fts(observations_fts, rank) VALUES('automerge', 8);
INSERT INTO prompts_fts(prompts_fts, rank) VALUES('automerge', 8);
INSERT INTO summaries_fts(summaries_fts, rank) VALUES('automerge', 8);

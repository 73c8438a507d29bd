-- memnode replica schema v22: each full-text index holds up to 64 MiB of a transaction's
-- terms in memory before it writes them out as a segment, instead of FTS5's default 1 MiB
-- (issue 29: bytes written by an import). A batch of 20,000 imported records (indexed at
-- its end, migration 20) was written as a dozen or more segments of 1 MiB each, which the
-- merges (migration 21) then read and wrote again; now it is one: memnode import of the 1M
-- make bench-scale dataset wrote 5,866 instead of 6,364 MiB up to its end (quiet machine,
-- 2026-12-05), and the node's peak RSS was 392 instead of 587 MiB. Memory: the terms of the
-- transaction being indexed, at most 64 MiB a table, freed at its commit; a hook's
-- transaction holds one record's.
INSERT INTO observations_fts(observations_fts, rank) VALUES('hashsize', 67108864);
INSERT INTO prompts_fts(prompts_fts, rank) VALUES('hashsize', 67108864);
INSERT INTO summaries_fts(summaries_fts, rank) VALUES('hashsize', 67108864);

-- memnode replica schema v12: FTS5 secure-delete on the three full-text indexes (replica/DESIGN.md
-- "Forget"). A delete then removes the record's tokens from the index's segments at once,
-- instead of adding a delete marker beside them; forget used to rewrite every index
-- ('optimize') so that no old segment kept a forgotten record's words, which is O(index)
-- (3 s at 100k observations). With secure-delete a forget's index work is proportional to
-- the tokens it removes. SQLite 3.42 or later reads such an index (the build bundles 3.54).
INSERT INTO observations_fts(observations_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO summaries_fts(summaries_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO prompts_fts(prompts_fts, rank) VALUES ('secure-delete', 1);

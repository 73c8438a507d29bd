-- memnode replica schema v4: the numbers claude-mem gave the records imported from it.
-- Agents and notes written for claude-mem name records by these integers (observation
-- #11131, session summary S42); `memnode import --from-claude-mem` keeps the map so they
-- keep resolving. Local state, not replicated: every device that imports the same
-- claude-mem database derives the same records and the same map.
CREATE TABLE claude_mem_ids (
    kind TEXT    NOT NULL, -- observation, summary or prompt
    num  INTEGER NOT NULL, -- claude-mem's row id
    id   TEXT    NOT NULL, -- the memnode record ID
    PRIMARY KEY (kind, num)
) WITHOUT ROWID;

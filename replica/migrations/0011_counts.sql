-- memnode replica schema v11: maintained counts (see replica/DESIGN.md, "Maintained counts").
-- The session-start context's header (a project's observations and discovery tokens), its
-- user line (the project's sessions) and status (every table's size) read these rows
-- instead of counting: at 1M observations a project's SUM was 247 ms and status 94 ms.
-- Triggers keep them in the statement that changes the rows, so every writer — commit,
-- import, applied ops, snapshot install, forget, supersede, compaction, cut, salvage — keeps
-- them in its own transaction, and none of them can forget to.
-- Idempotent (a test that rewinds schema_version runs it again): it recounts.
DROP TRIGGER IF EXISTS counts_sessions_ai;
DROP TRIGGER IF EXISTS counts_sessions_ad;
DROP TRIGGER IF EXISTS counts_sessions_au;
DROP TRIGGER IF EXISTS counts_observations_ai;
DROP TRIGGER IF EXISTS counts_observations_ad;
DROP TRIGGER IF EXISTS counts_observations_au;
DROP TRIGGER IF EXISTS counts_prompts_ai;
DROP TRIGGER IF EXISTS counts_prompts_ad;
DROP TRIGGER IF EXISTS counts_summaries_ai;
DROP TRIGGER IF EXISTS counts_summaries_ad;
DROP TRIGGER IF EXISTS counts_ops_ai;
DROP TRIGGER IF EXISTS counts_ops_ad;
DROP TRIGGER IF EXISTS counts_tombstones_ai;
DROP TRIGGER IF EXISTS counts_tombstones_ad;
DROP TABLE IF EXISTS table_counts;
DROP TABLE IF EXISTS project_counts;
CREATE TABLE table_counts (
    name TEXT PRIMARY KEY,            -- sessions, prompts, observations, summaries, ops, tombstones
    n    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE project_counts (
    project          TEXT PRIMARY KEY,
    observations     INTEGER NOT NULL DEFAULT 0,
    discovery_tokens INTEGER NOT NULL DEFAULT 0,
    sessions         INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

INSERT INTO table_counts(name, n) VALUES
    ('sessions', (SELECT COUNT(*) FROM sessions)),
    ('prompts', (SELECT COUNT(*) FROM prompts)),
    ('observations', (SELECT COUNT(*) FROM observations)),
    ('summaries', (SELECT COUNT(*) FROM summaries)),
    ('ops', (SELECT COUNT(*) FROM ops)),
    ('tombstones', (SELECT COUNT(*) FROM tombstones));
INSERT INTO project_counts(project, observations, discovery_tokens)
    SELECT project, COUNT(*), SUM(discovery_tokens) FROM observations GROUP BY project;
INSERT INTO project_counts(project, sessions)
    SELECT project, COUNT(*) FROM sessions WHERE true GROUP BY project
    ON CONFLICT(project) DO UPDATE SET sessions = excluded.sessions;

CREATE TRIGGER counts_sessions_ai AFTER INSERT ON sessions BEGIN
    UPDATE table_counts SET n = n + 1 WHERE name = 'sessions';
    INSERT INTO project_counts(project, sessions) VALUES (new.project, 1)
        ON CONFLICT(project) DO UPDATE SET sessions = sessions + 1;
END;
CREATE TRIGGER counts_sessions_ad AFTER DELETE ON sessions BEGIN
    UPDATE table_counts SET n = n - 1 WHERE name = 'sessions';
    UPDATE project_counts SET sessions = sessions - 1 WHERE project = old.project;
END;
-- A session's project is part of its LWW register: a later write may move it.
CREATE TRIGGER counts_sessions_au AFTER UPDATE OF project ON sessions WHEN old.project IS NOT new.project BEGIN
    UPDATE project_counts SET sessions = sessions - 1 WHERE project = old.project;
    INSERT INTO project_counts(project, sessions) VALUES (new.project, 1)
        ON CONFLICT(project) DO UPDATE SET sessions = sessions + 1;
END;

CREATE TRIGGER counts_observations_ai AFTER INSERT ON observations BEGIN
    UPDATE table_counts SET n = n + 1 WHERE name = 'observations';
    INSERT INTO project_counts(project, observations, discovery_tokens) VALUES (new.project, 1, new.discovery_tokens)
        ON CONFLICT(project) DO UPDATE SET observations = observations + 1, discovery_tokens = discovery_tokens + excluded.discovery_tokens;
END;
CREATE TRIGGER counts_observations_ad AFTER DELETE ON observations BEGIN
    UPDATE table_counts SET n = n - 1 WHERE name = 'observations';
    UPDATE project_counts SET observations = observations - 1, discovery_tokens = discovery_tokens - old.discovery_tokens
        WHERE project = old.project;
END;
-- Observations are immutable; should a repair ever rewrite one, its counts move with it.
CREATE TRIGGER counts_observations_au AFTER UPDATE OF project, discovery_tokens ON observations BEGIN
    UPDATE project_counts SET observations = observations - 1, discovery_tokens = discovery_tokens - old.discovery_tokens
        WHERE project = old.project;
    INSERT INTO project_counts(project, observations, discovery_tokens) VALUES (new.project, 1, new.discovery_tokens)
        ON CONFLICT(project) DO UPDATE SET observations = observations + 1, discovery_tokens = discovery_tokens + excluded.discovery_tokens;
END;

CREATE TRIGGER counts_prompts_ai AFTER INSERT ON prompts BEGIN
    UPDATE table_counts SET n = n + 1 WHERE name = 'prompts';
END;
CREATE TRIGGER counts_prompts_ad AFTER DELETE ON prompts BEGIN
    UPDATE table_counts SET n = n - 1 WHERE name = 'prompts';
END;
CREATE TRIGGER counts_summaries_ai AFTER INSERT ON summaries BEGIN
    UPDATE table_counts SET n = n + 1 WHERE name = 'summaries';
END;
CREATE TRIGGER counts_summaries_ad AFTER DELETE ON summaries BEGIN
    UPDATE table_counts SET n = n - 1 WHERE name = 'summaries';
END;
CREATE TRIGGER counts_ops_ai AFTER INSERT ON ops BEGIN
    UPDATE table_counts SET n = n + 1 WHERE name = 'ops';
END;
CREATE TRIGGER counts_ops_ad AFTER DELETE ON ops BEGIN
    UPDATE table_counts SET n = n - 1 WHERE name = 'ops';
END;
CREATE TRIGGER counts_tombstones_ai AFTER INSERT ON tombstones BEGIN
    UPDATE table_counts SET n = n + 1 WHERE name = 'tombstones';
END;
CREATE TRIGGER counts_tombstones_ad AFTER DELETE ON tombstones BEGIN
    UPDATE table_counts SET n = n - 1 WHERE name = 'tombstones';
END;

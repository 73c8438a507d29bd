-- memnode replica schema v1.
-- Records carry a global ID (time-sortable, origin-unique), their origin device and an HLC
-- stamp. Local integer rowids exist only for FTS5. See replica/DESIGN.md.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE sessions (
    id           TEXT PRIMARY KEY,           -- the IDE's session id (globally unique)
    project      TEXT NOT NULL,
    platform     TEXT NOT NULL DEFAULT '',
    started_at   INTEGER NOT NULL,           -- epoch ms
    ended_at     INTEGER,                    -- epoch ms, NULL while active
    status       TEXT NOT NULL DEFAULT 'active',
    origin       TEXT NOT NULL,
    hlc          INTEGER NOT NULL,           -- LWW stamp of the mutable fields
    -- local-only processing state, never replicated:
    prompt_count INTEGER NOT NULL DEFAULT 0,
    turn_private INTEGER NOT NULL DEFAULT 0,
    first_prompt TEXT NOT NULL DEFAULT '',
    last_prompt  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sessions_project ON sessions(project, started_at);

CREATE TABLE prompts (
    rowid         INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    session_id    TEXT NOT NULL,
    project       TEXT NOT NULL,
    prompt_number INTEGER NOT NULL,
    text          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    origin        TEXT NOT NULL,
    hlc           INTEGER NOT NULL
);
CREATE INDEX prompts_session ON prompts(session_id, prompt_number);
CREATE INDEX prompts_project_time ON prompts(project, created_at);
CREATE INDEX prompts_time ON prompts(created_at);

CREATE TABLE observations (
    rowid            INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    session_id       TEXT NOT NULL,
    project          TEXT NOT NULL,
    type             TEXT NOT NULL,
    title            TEXT NOT NULL,
    subtitle         TEXT NOT NULL DEFAULT '',
    narrative        TEXT NOT NULL DEFAULT '',
    facts            TEXT NOT NULL DEFAULT '[]',  -- JSON array of strings
    concepts         TEXT NOT NULL DEFAULT '[]',
    files_read       TEXT NOT NULL DEFAULT '[]',
    files_modified   TEXT NOT NULL DEFAULT '[]',
    tool_name        TEXT NOT NULL DEFAULT '',
    prompt_number    INTEGER NOT NULL DEFAULT 0,
    discovery_tokens INTEGER NOT NULL DEFAULT 0,
    model            TEXT NOT NULL DEFAULT '',
    content_hash     TEXT NOT NULL,
    created_at       INTEGER NOT NULL,
    origin           TEXT NOT NULL,
    hlc              INTEGER NOT NULL
);
CREATE INDEX observations_project_time ON observations(project, created_at);
CREATE INDEX observations_time ON observations(created_at);
CREATE INDEX observations_session ON observations(session_id, created_at);
CREATE INDEX observations_hash ON observations(session_id, content_hash);

-- Paths an observation read or modified, for the file-context hook.
CREATE TABLE observation_files (
    path      TEXT NOT NULL,
    obs_rowid INTEGER NOT NULL REFERENCES observations(rowid) ON DELETE CASCADE,
    modified  INTEGER NOT NULL,
    PRIMARY KEY (path, obs_rowid)
) WITHOUT ROWID;
CREATE INDEX observation_files_obs ON observation_files(obs_rowid);

CREATE TABLE summaries (
    rowid            INTEGER PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    session_id       TEXT NOT NULL,
    project          TEXT NOT NULL,
    request          TEXT NOT NULL DEFAULT '',
    investigated     TEXT NOT NULL DEFAULT '',
    learned          TEXT NOT NULL DEFAULT '',
    completed        TEXT NOT NULL DEFAULT '',
    next_steps       TEXT NOT NULL DEFAULT '',
    notes            TEXT NOT NULL DEFAULT '',
    discovery_tokens INTEGER NOT NULL DEFAULT 0,
    model            TEXT NOT NULL DEFAULT '',
    created_at       INTEGER NOT NULL,
    origin           TEXT NOT NULL,
    hlc              INTEGER NOT NULL
);
CREATE INDEX summaries_project_time ON summaries(project, created_at);
CREATE INDEX summaries_time ON summaries(created_at);
CREATE INDEX summaries_session ON summaries(session_id);

-- Device names: LWW register per origin.
CREATE TABLE devices (
    origin TEXT PRIMARY KEY,
    name   TEXT NOT NULL,
    hlc    INTEGER NOT NULL,
    writer TEXT NOT NULL
) WITHOUT ROWID;

-- Forgotten record IDs (or session IDs): a tombstone always wins.
CREATE TABLE tombstones (
    id     TEXT PRIMARY KEY,
    hlc    INTEGER NOT NULL,
    origin TEXT NOT NULL
) WITHOUT ROWID;

-- The op-log: every replicated change, per origin, with contiguous seqs.
CREATE TABLE ops (
    origin    TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    hlc       INTEGER NOT NULL,
    kind      TEXT NOT NULL,
    record_id TEXT NOT NULL,
    payload   BLOB,                 -- NULL once the record was forgotten
    PRIMARY KEY (origin, seq)
) WITHOUT ROWID;
CREATE INDEX ops_record ON ops(record_id);

-- Version vector: highest contiguous seq applied per origin.
CREATE TABLE version_vector (
    origin TEXT PRIMARY KEY,
    seq    INTEGER NOT NULL
) WITHOUT ROWID;

-- Event IDs already turned into records, so a replayed spool entry is stored once.
CREATE TABLE seen_events (
    event_id TEXT PRIMARY KEY,
    at       INTEGER NOT NULL
) WITHOUT ROWID;

-- Full-text search: external-content FTS5 tables kept in step by triggers.
CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, subtitle, narrative, facts, concepts,
    content='observations', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
END;
CREATE TRIGGER observations_au AFTER UPDATE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
END;

CREATE VIRTUAL TABLE summaries_fts USING fts5(
    request, investigated, learned, completed, next_steps, notes,
    content='summaries', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER summaries_ai AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes)
    VALUES (new.rowid, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes);
END;
CREATE TRIGGER summaries_ad AFTER DELETE ON summaries BEGIN
    INSERT INTO summaries_fts(summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes)
    VALUES ('delete', old.rowid, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes);
END;

CREATE VIRTUAL TABLE prompts_fts USING fts5(
    text, content='prompts', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER prompts_ai AFTER INSERT ON prompts BEGIN
    INSERT INTO prompts_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER prompts_ad AFTER DELETE ON prompts BEGIN
    INSERT INTO prompts_fts(prompts_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;

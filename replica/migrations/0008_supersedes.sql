-- memnode replica schema v8: corrections (see replica/DESIGN.md, "Supersede").
-- A row says the observation old_id is superseded by the observation new_id (a correction
-- that holds what is true, or another record named in its place). The rows are a grow-only
-- set applied from ops of kind 'supersede' (record_id = old_id); a forget of old_id, or of
-- its session (session_id), deletes them. A row hides old_id from the session-start context,
-- the file context and default search while new_id is stored.
CREATE TABLE IF NOT EXISTS supersedes (
    old_id     TEXT NOT NULL,
    new_id     TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (old_id, new_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS supersedes_new ON supersedes(new_id);
CREATE INDEX IF NOT EXISTS supersedes_session ON supersedes(session_id);

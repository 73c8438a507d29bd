-- memnode replica schema v9: pinned notes (see replica/DESIGN.md, "Pins").
-- A row is the LWW register "is observation id pinned", written by ops of kind 'pin'
-- (record_id = id): the write with the highest (hlc, writer) wins, so every device agrees
-- whatever the order of delivery. Pinned observations head every session-start context of
-- their project. A forget of id, or of its session, deletes the row.
CREATE TABLE IF NOT EXISTS pins (
    id         TEXT PRIMARY KEY,
    pinned     INTEGER NOT NULL,
    hlc        INTEGER NOT NULL,
    writer     TEXT NOT NULL,
    session_id TEXT NOT NULL DEFAULT '',
    project    TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pins_project ON pins(project) WHERE pinned = 1;
CREATE INDEX IF NOT EXISTS pins_session ON pins(session_id);

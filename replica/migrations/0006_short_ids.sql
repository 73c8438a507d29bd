-- memnode replica schema v6: short IDs. h is a 12-character hash of a prompt's,
-- observation's or summary's ID (shortid.go); the index, timeline and context show the
-- shortest prefix of it that no other record here shares, and get/timeline accept any
-- unique prefix. Derived locally (filled in Go when a record is stored, and for the records
-- already here when this migration runs); deleting a record deletes its row.
CREATE TABLE short_ids (
    h  TEXT PRIMARY KEY,
    id TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX short_ids_id ON short_ids(id);
CREATE TRIGGER observations_short_ad AFTER DELETE ON observations BEGIN
    DELETE FROM short_ids WHERE id = old.id;
END;
CREATE TRIGGER prompts_short_ad AFTER DELETE ON prompts BEGIN
    DELETE FROM short_ids WHERE id = old.id;
END;
CREATE TRIGGER summaries_short_ad AFTER DELETE ON summaries BEGIN
    DELETE FROM short_ids WHERE id = old.id;
END;

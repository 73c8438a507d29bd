-- memnode replica schema v5: file paths are searchable and filterable (see docs/SEARCH.md).
-- observations_fts gains a files column: files_read and files_modified as stored (JSON
-- arrays; the tokenizer splits a path into words, internal/auth/middleware.go →
-- internal auth middleware go). The column is not one of observations', so the index's
-- external content is a view. The index is rebuilt from it once, here.
DROP TRIGGER observations_ai;
DROP TRIGGER observations_ad;
DROP TRIGGER observations_au;
DROP TABLE observations_fts;
CREATE VIEW observations_fts_content AS
    SELECT rowid, title, subtitle, narrative, facts, concepts, files_read || ' ' || files_modified AS files
    FROM observations;
CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, subtitle, narrative, facts, concepts, files,
    content='observations_fts_content', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, files)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.files_read || ' ' || new.files_modified);
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, files)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.files_read || ' ' || old.files_modified);
END;
CREATE TRIGGER observations_au AFTER UPDATE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, files)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.files_read || ' ' || old.files_modified);
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, files)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.files_read || ' ' || new.files_modified);
END;
INSERT INTO observations_fts(observations_fts) VALUES ('rebuild');

-- The file filter matches a path by its last component first: name is the basename
-- (what follows the last '/'), indexed.
ALTER TABLE observation_files ADD COLUMN name TEXT NOT NULL DEFAULT '';
UPDATE observation_files SET name = substr(path, length(rtrim(path, replace(path, '/', ''))) + 1);
CREATE INDEX observation_files_name ON observation_files(name);

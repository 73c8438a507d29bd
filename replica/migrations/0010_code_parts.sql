-- memnode replica schema v10: code-aware tokens (replica/DESIGN.md "Code-aware tokens").
-- observations_fts gains a parts column: the words inside the record's identifiers that
-- the unicode61 tokenizer keeps whole (OnLoad → On Load, parseJSONBody → parse JSON Body,
-- http2 → http 2), computed by memnode_code_parts — internal/codewords.Parts, a Go function
-- every replica connection registers — from the same text the other columns index. The
-- whole identifiers stay in their own columns, so an exact name still matches as one
-- token. The index is rebuilt from the view once, here.
DROP TRIGGER observations_ai;
DROP TRIGGER observations_ad;
DROP TRIGGER observations_au;
DROP TABLE observations_fts;
DROP VIEW observations_fts_content;
CREATE VIEW observations_fts_content AS
    SELECT rowid, title, subtitle, narrative, facts, concepts, files_read || ' ' || files_modified AS files,
        memnode_code_parts(coalesce(title || ' ' || subtitle || ' ' || narrative || ' ' || facts || ' ' || concepts || ' ' || files_read || ' ' || files_modified, '')) AS parts
    FROM observations;
CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, subtitle, narrative, facts, concepts, files, parts,
    content='observations_fts_content', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, files, parts)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.files_read || ' ' || new.files_modified,
        memnode_code_parts(coalesce(new.title || ' ' || new.subtitle || ' ' || new.narrative || ' ' || new.facts || ' ' || new.concepts || ' ' || new.files_read || ' ' || new.files_modified, '')));
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, files, parts)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.files_read || ' ' || old.files_modified,
        memnode_code_parts(coalesce(old.title || ' ' || old.subtitle || ' ' || old.narrative || ' ' || old.facts || ' ' || old.concepts || ' ' || old.files_read || ' ' || old.files_modified, '')));
END;
CREATE TRIGGER observations_au AFTER UPDATE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, files, parts)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.files_read || ' ' || old.files_modified,
        memnode_code_parts(coalesce(old.title || ' ' || old.subtitle || ' ' || old.narrative || ' ' || old.facts || ' ' || old.concepts || ' ' || old.files_read || ' ' || old.files_modified, '')));
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, files, parts)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.files_read || ' ' || new.files_modified,
        memnode_code_parts(coalesce(new.title || ' ' || new.subtitle || ' ' || new.narrative || ' ' || new.facts || ' ' || new.concepts || ' ' || new.files_read || ' ' || new.files_modified, '')));
END;
INSERT INTO observations_fts(observations_fts) VALUES ('rebuild');

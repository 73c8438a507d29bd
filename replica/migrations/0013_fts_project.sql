-- memnode replica schema v13: the full-text indexes filter by project
-- (replica/DESIGN.md, "Project filter in the index"). Each *_fts table gains a last column,
-- project_key: one token naming the record's project (memnode_project_key, a Go function
-- every replica connection registers: FNV-64a of the project name, in decimal digits, which
-- the porter tokenizer keeps whole). A project-filtered search adds the project's key to
-- its MATCH, so FTS5 intersects the doclists and walks only the project's matches; the
-- table filtered every match before (at 1M observations a common word's matches in a small
-- project are a walk of the whole doclist with a table lookup per match). Its bm25 weight
-- is 0 and every other MATCH excludes the column, so no query term matches it. The three
-- indexes are rebuilt from their content views once, here, with migration 0012's
-- secure-delete set again (a recreated table starts with FTS5's defaults).
DROP TRIGGER IF EXISTS observations_ai;
DROP TRIGGER IF EXISTS observations_ad;
DROP TRIGGER IF EXISTS observations_au;
DROP TABLE IF EXISTS observations_fts;
DROP VIEW IF EXISTS observations_fts_content;
CREATE VIEW observations_fts_content AS
    SELECT rowid, title, subtitle, narrative, facts, concepts, files_read || ' ' || files_modified AS files,
        memnode_code_parts(coalesce(title || ' ' || subtitle || ' ' || narrative || ' ' || facts || ' ' || concepts || ' ' || files_read || ' ' || files_modified, '')) AS parts,
        memnode_project_key(project) AS project_key
    FROM observations;
CREATE VIRTUAL TABLE observations_fts USING fts5(
    title, subtitle, narrative, facts, concepts, files, parts, project_key,
    content='observations_fts_content', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER observations_ai AFTER INSERT ON observations BEGIN
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, files, parts, project_key)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.files_read || ' ' || new.files_modified,
        memnode_code_parts(coalesce(new.title || ' ' || new.subtitle || ' ' || new.narrative || ' ' || new.facts || ' ' || new.concepts || ' ' || new.files_read || ' ' || new.files_modified, '')), memnode_project_key(new.project));
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, files, parts, project_key)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.files_read || ' ' || old.files_modified,
        memnode_code_parts(coalesce(old.title || ' ' || old.subtitle || ' ' || old.narrative || ' ' || old.facts || ' ' || old.concepts || ' ' || old.files_read || ' ' || old.files_modified, '')), memnode_project_key(old.project));
END;
CREATE TRIGGER observations_au AFTER UPDATE ON observations BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, files, parts, project_key)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.files_read || ' ' || old.files_modified,
        memnode_code_parts(coalesce(old.title || ' ' || old.subtitle || ' ' || old.narrative || ' ' || old.facts || ' ' || old.concepts || ' ' || old.files_read || ' ' || old.files_modified, '')), memnode_project_key(old.project));
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, files, parts, project_key)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.files_read || ' ' || new.files_modified,
        memnode_code_parts(coalesce(new.title || ' ' || new.subtitle || ' ' || new.narrative || ' ' || new.facts || ' ' || new.concepts || ' ' || new.files_read || ' ' || new.files_modified, '')), memnode_project_key(new.project));
END;
INSERT INTO observations_fts(observations_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO observations_fts(observations_fts) VALUES ('rebuild');

DROP TRIGGER IF EXISTS summaries_ai;
DROP TRIGGER IF EXISTS summaries_ad;
DROP TABLE IF EXISTS summaries_fts;
DROP VIEW IF EXISTS summaries_fts_content;
CREATE VIEW summaries_fts_content AS
    SELECT rowid, request, investigated, learned, completed, next_steps, notes, memnode_project_key(project) AS project_key
    FROM summaries;
CREATE VIRTUAL TABLE summaries_fts USING fts5(
    request, investigated, learned, completed, next_steps, notes, project_key,
    content='summaries_fts_content', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER summaries_ai AFTER INSERT ON summaries BEGIN
    INSERT INTO summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes, project_key)
    VALUES (new.rowid, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes, memnode_project_key(new.project));
END;
CREATE TRIGGER summaries_ad AFTER DELETE ON summaries BEGIN
    INSERT INTO summaries_fts(summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes, project_key)
    VALUES ('delete', old.rowid, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes, memnode_project_key(old.project));
END;
INSERT INTO summaries_fts(summaries_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO summaries_fts(summaries_fts) VALUES ('rebuild');

DROP TRIGGER IF EXISTS prompts_ai;
DROP TRIGGER IF EXISTS prompts_ad;
DROP TABLE IF EXISTS prompts_fts;
DROP VIEW IF EXISTS prompts_fts_content;
CREATE VIEW prompts_fts_content AS
    SELECT rowid, text, memnode_project_key(project) AS project_key FROM prompts;
CREATE VIRTUAL TABLE prompts_fts USING fts5(
    text, project_key,
    content='prompts_fts_content', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER prompts_ai AFTER INSERT ON prompts BEGIN
    INSERT INTO prompts_fts(rowid, text, project_key) VALUES (new.rowid, new.text, memnode_project_key(new.project));
END;
CREATE TRIGGER prompts_ad AFTER DELETE ON prompts BEGIN
    INSERT INTO prompts_fts(prompts_fts, rowid, text, project_key) VALUES ('delete', old.rowid, old.text, memnode_project_key(old.project));
END;
INSERT INTO prompts_fts(prompts_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO prompts_fts(prompts_fts) VALUES ('rebuild');

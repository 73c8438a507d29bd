-- memnode replica schema v20: a write transaction may index its new records in one statement
-- at its end (issue 29: import and snapshot install rates, bytes written). FTS5 writes its
-- pending terms to disk as a new segment at every savepoint (fts5SavepointMethod), and SQLite
-- opens one — a statement journal — for every statement that may write several rows and
-- abort: every insert of a record (its triggers write the full-text index) and of an op. So
-- an import batch or a snapshot chunk wrote each record's terms as a segment of its own and
-- FTS5 spent the rest of the transaction merging them: on the 100k make bench-scale import
-- the flushes were a quarter of the node's CPU and their statement journals a sixth.
-- A transaction that defers indexing (replica/ftsdefer.go) puts a row here per table naming
-- the table's highest rowid at its start; the triggers leave alone every row above it, and
-- before it commits the transaction indexes those rows from the content views in one INSERT
-- … SELECT per table and deletes its rows here. A row inserted and then deleted or updated in
-- the same transaction is indexed once, as it is at the end, or not at all. A committed
-- database never has a row here (a test asserts it), so every other writer — another
-- program's connection included — indexes row by row as before.
CREATE TABLE IF NOT EXISTS fts_deferred (
    tbl   TEXT PRIMARY KEY,     -- observations, prompts, summaries
    after INTEGER NOT NULL      -- the table's highest rowid when the transaction began
) WITHOUT ROWID;

DROP TRIGGER IF EXISTS observations_ai;
DROP TRIGGER IF EXISTS observations_ad;
DROP TRIGGER IF EXISTS observations_au;
CREATE TRIGGER observations_ai AFTER INSERT ON observations
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE tbl = 'observations' AND new.rowid > after)
BEGIN
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, files, parts, project_key)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.files_read || ' ' || new.files_modified,
        memnode_code_parts(coalesce(new.title || ' ' || new.subtitle || ' ' || new.narrative || ' ' || new.facts || ' ' || new.concepts || ' ' || new.files_read || ' ' || new.files_modified, '')), memnode_project_key(new.project));
END;
CREATE TRIGGER observations_ad AFTER DELETE ON observations
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE tbl = 'observations' AND old.rowid > after)
BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, files, parts, project_key)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.files_read || ' ' || old.files_modified,
        memnode_code_parts(coalesce(old.title || ' ' || old.subtitle || ' ' || old.narrative || ' ' || old.facts || ' ' || old.concepts || ' ' || old.files_read || ' ' || old.files_modified, '')), memnode_project_key(old.project));
END;
CREATE TRIGGER observations_au AFTER UPDATE ON observations
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE tbl = 'observations' AND old.rowid > after)
BEGIN
    INSERT INTO observations_fts(observations_fts, rowid, title, subtitle, narrative, facts, concepts, files, parts, project_key)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts, old.files_read || ' ' || old.files_modified,
        memnode_code_parts(coalesce(old.title || ' ' || old.subtitle || ' ' || old.narrative || ' ' || old.facts || ' ' || old.concepts || ' ' || old.files_read || ' ' || old.files_modified, '')), memnode_project_key(old.project));
    INSERT INTO observations_fts(rowid, title, subtitle, narrative, facts, concepts, files, parts, project_key)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts, new.files_read || ' ' || new.files_modified,
        memnode_code_parts(coalesce(new.title || ' ' || new.subtitle || ' ' || new.narrative || ' ' || new.facts || ' ' || new.concepts || ' ' || new.files_read || ' ' || new.files_modified, '')), memnode_project_key(new.project));
END;

DROP TRIGGER IF EXISTS summaries_ai;
DROP TRIGGER IF EXISTS summaries_ad;
CREATE TRIGGER summaries_ai AFTER INSERT ON summaries
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE tbl = 'summaries' AND new.rowid > after)
BEGIN
    INSERT INTO summaries_fts(rowid, request, investigated, learned, completed, next_steps, notes, project_key)
    VALUES (new.rowid, new.request, new.investigated, new.learned, new.completed, new.next_steps, new.notes, memnode_project_key(new.project));
END;
CREATE TRIGGER summaries_ad AFTER DELETE ON summaries
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE tbl = 'summaries' AND old.rowid > after)
BEGIN
    INSERT INTO summaries_fts(summaries_fts, rowid, request, investigated, learned, completed, next_steps, notes, project_key)
    VALUES ('delete', old.rowid, old.request, old.investigated, old.learned, old.completed, old.next_steps, old.notes, memnode_project_key(old.project));
END;

DROP TRIGGER IF EXISTS prompts_ai;
DROP TRIGGER IF EXISTS prompts_ad;
CREATE TRIGGER prompts_ai AFTER INSERT ON prompts
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE tbl = 'prompts' AND new.rowid > after)
BEGIN
    INSERT INTO prompts_fts(rowid, text, project_key) VALUES (new.rowid, new.text, memnode_project_key(new.project));
END;
CREATE TRIGGER prompts_ad AFTER DELETE ON prompts
WHEN NOT EXISTS (SELECT 1 FROM fts_deferred WHERE tbl = 'prompts' AND old.rowid > after)
BEGIN
    INSERT INTO prompts_fts(prompts_fts, rowid, text, project_key) VALUES ('delete', old.rowid, old.text, memnode_project_key(old.project));
END;

-- memnode replica schema v14: the highest op stamp, kept (issue 29: start in constant time).
-- The clock resumes from the highest stamp of the op-log at open; finding it was a scan of
-- every op (ops has no index on hlc): 1.7 s at 100k, 8.3 s at 1M. The row is kept by the
-- trigger in the transaction that inserts an op, whatever the path (commit, apply, import,
-- snapshot), and only ever grows: a stamp once issued or observed is never issued again,
-- even when its op is later compacted or cut away. NULL until the first open after this
-- migration fills it with one last scan (loadClock: the scan applies the clock bound, which
-- depends on the time of the open, so SQL here cannot).
CREATE TABLE IF NOT EXISTS hlc_max (
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    hlc INTEGER
);
INSERT OR IGNORE INTO hlc_max(id, hlc) VALUES (1, NULL);
CREATE TRIGGER IF NOT EXISTS ops_hlc_max AFTER INSERT ON ops
WHEN NEW.hlc > (SELECT hlc FROM hlc_max WHERE id = 1)
BEGIN
    UPDATE hlc_max SET hlc = NEW.hlc WHERE id = 1;
END;

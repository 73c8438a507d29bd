-- memnode replica schema v18: the content-hash index keys the hash alone (issue 29: bytes a
-- record on disk). observations_hash (session_id, content_hash) held each observation's
-- session ID a third time (the row and observations_session hold it too): 61 bytes an
-- observation on the 100k make bench-scale dataset. The one lookup through it, a session's
-- repeated observation (planCommit), finds the rows with the hash — almost always none or
-- one — and checks their session in the row.
DROP INDEX IF EXISTS observations_hash;
CREATE INDEX observations_hash ON observations(content_hash);

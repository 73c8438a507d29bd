-- memnode replica schema v3: cut-offs of removed devices.
-- A device removed from the sync group gets a cut-off: the last of its ops any replica may
-- hold. ApplyOps drops its later ops, and CutOrigin deletes those already held (see
-- replica/DESIGN.md, "Removal cut-off"). Local state, set by sync from the group state.
CREATE TABLE origin_cuts (
    origin TEXT PRIMARY KEY,
    seq    INTEGER NOT NULL
);

-- memnode replica schema v2: embedding vectors beside observations.
-- Derived locally from the row's text by the node's embedding worker, like the FTS index:
-- never replicated, no ops. A forgotten observation takes its vector with it (cascade).
-- dim 0 with an empty vec marks a row the model could not embed, so it is not retried.
CREATE TABLE vectors (
    obs_rowid INTEGER PRIMARY KEY REFERENCES observations(rowid) ON DELETE CASCADE,
    model     TEXT NOT NULL,      -- embedding model ID; vectors of different models never mix
    dim       INTEGER NOT NULL,
    vec       BLOB NOT NULL       -- little-endian float32 x dim (embed.EncodeVector)
);
CREATE INDEX vectors_model ON vectors(model, dim);

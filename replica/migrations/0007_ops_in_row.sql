-- memnode replica schema v7: observation ops keep their payload in the record row.
-- An observation is immutable, so its op's payload (the bulk of the op-log: 47 of 85.6 MB
-- for 50k records) repeats its row. inrow = 1 marks an op whose payload is NULL here and is
-- rebuilt from the observations row when served (OpsSince), byte for byte what was stored
-- (oplog_inrow.go checks that before it drops the bytes). The ops already here are
-- converted in Go (opsInRow), each only if its rebuild is byte-exact.
ALTER TABLE ops ADD COLUMN inrow INTEGER NOT NULL DEFAULT 0;

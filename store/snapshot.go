package store

import "errors"

// SnapshotChunk is a run of rows of one table, or the end of a snapshot: Table "" and VV
// set to the vector the snapshot was taken at. Values are nil, int64, string or []byte.
type SnapshotChunk struct {
	Table   string
	Columns []string
	Rows    [][]any
	VV      VersionVector
}

// SnapshotResult counts what InstallSnapshot stored.
type SnapshotResult struct {
	Records int // record rows (sessions, prompts, observations, summaries, devices, tombstones)
	Ops     int // op-log rows
	Cut     int // ops dropped because their origin was removed before them
}

// ErrNotBlank refuses a snapshot for a store that already holds something of another
// origin: a snapshot only starts a new device.
var ErrNotBlank = errors.New("replica is not blank")

// ErrBadSnapshot reports a snapshot that does not fit this schema or contradicts itself.
var ErrBadSnapshot = errors.New("malformed snapshot")

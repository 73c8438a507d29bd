package store

import "errors"

// SnapshotChunk is one message of a snapshot: the beginning (Begin, with the vector the
// snapshot is taken at in VV and the rows it carries in all in Total), a run of rows of one
// table, or the end (Table "" and VV the same vector). Values are nil, int64, string or
// []byte.
type SnapshotChunk struct {
	Begin   bool
	Total   int64
	Table   string
	Columns []string
	Rows    [][]any
	VV      VersionVector
}

// SnapshotCursor is where a snapshot resumes: after the row of Table whose key is Key (and
// Seq, for the op-log, whose key is origin and seq); every table before Table is done. The
// zero cursor is the whole snapshot.
type SnapshotCursor struct {
	Table string
	Key   string
	Seq   uint64
}

// SnapshotProgress is an install that began and has not ended: where it resumes, and how
// many rows are installed of how many the snapshot carries (as its latest sender counted).
type SnapshotProgress struct {
	Active bool
	From   SnapshotCursor
	Rows   int64
	Total  int64
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

// ErrSnapshotIncomplete refuses to serve a snapshot from a store that is still installing
// one: half a snapshot is never served as a whole.
var ErrSnapshotIncomplete = errors.New("this device is still installing a snapshot")

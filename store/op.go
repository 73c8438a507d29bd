package store

import (
	"errors"
	"time"
)

// Op kinds.
const (
	OpSession     = "session"
	OpPrompt      = "prompt"
	OpObservation = "observation"
	OpSummary     = "summary"
	OpForget      = "forget"
	OpDevice      = "device"
	// OpSupersede names its record (an observation) as replaced by another (replica's
	// supersede.go): a grow-only set of links, dropped with the record or its session when
	// forgotten.
	OpSupersede = "supersede"
	// OpPin sets whether its record (an observation) is pinned (replica's pin.go): a
	// last-writer-wins register per observation, dropped with the record or its session when
	// forgotten.
	OpPin = "pin"
	// OpCompacted is the placeholder OpsSince serves for a seq whose op Compact removed: it
	// carries no record and no payload, applies nothing and is not stored (an older build
	// stores it as an op of a kind it does not know, which also applies nothing).
	OpCompacted = "compacted"
)

// Op is one replicated change. (Origin, Seq) identifies it; seqs of an origin are
// contiguous from 1. Payload is the record as JSON, nil once the record was forgotten.
type Op struct {
	Origin   string `json:"origin"`
	Seq      uint64 `json:"seq"`
	HLC      uint64 `json:"hlc"`
	Kind     string `json:"kind"`
	RecordID string `json:"record_id"`
	Payload  []byte `json:"payload,omitempty"`
}

// VersionVector maps origin → highest contiguous seq applied.
type VersionVector map[string]uint64

// ApplyResult counts what ApplyOps did.
type ApplyResult struct {
	Applied    int // new ops stored and applied
	Duplicates int // ops already known
	Gaps       int // ops skipped because an earlier seq of their origin is missing
	Cut        int // ops dropped because their origin was removed before them (CutOrigin)
	Ahead      int // ops refused for a stamp too far ahead (then the error wraps memory.ErrClockAhead)
}

// CompactResult counts what Compact removed from the op-log.
type CompactResult struct {
	Superseded int // session and device ops whose register another op of the log has won
	Forgotten  int // ops of forgotten records (their payload was already purged)
}

// Removed is the number of op rows Compact deleted.
func (c CompactResult) Removed() int { return c.Superseded + c.Forgotten }

// ErrBadOp reports an op that cannot be applied (missing fields, undecodable payload).
var ErrBadOp = errors.New("malformed op")

// HLCLogicalBits is the split of an HLC stamp: wall-clock milliseconds in the high 48 bits
// and a logical counter in the low 16, so stamps compare as plain integers and stay close
// to real time.
const HLCLogicalBits = 16

// HLCTime returns the wall-clock part of an HLC stamp.
func HLCTime(h uint64) time.Time { return time.UnixMilli(int64(h >> HLCLogicalBits)) }

package replica

import (
	"encoding/json"
	"fmt"
	"github.com/memnode/memnode/store"
	"time"

	"github.com/memnode/memnode/memory"
)

// DefaultMaxClockSkew is how far ahead of this device's wall clock a stamp may be. It is
// CockroachDB's max-offset rule applied to a person's devices: a clock more than this far
// ahead is a broken clock (or a forged stamp), not skew, and a replica that observed it
// would drag every device's clock along, for good. NTP keeps devices within a second; five
// minutes leaves room for a laptop that slept without syncing its clock.
const DefaultMaxClockSkew = 5 * time.Minute

// maxStamp is the largest stamp this replica accepts now: wall clock + MaxClockSkew, any
// logical counter. It is far below 2^63, so stamps always fit SQLite's signed integers.
func (r *Replica) maxStamp() uint64 {
	return uint64(r.cfg.Now().Add(r.cfg.MaxClockSkew).UnixMilli())<<hlcLogicalBits | (1<<hlcLogicalBits - 1)
}

// checkStamp refuses a stamp beyond maxStamp with memory.ErrClockAhead.
func (r *Replica) checkStamp(what string, hlc uint64) error {
	if hlc <= r.maxStamp() {
		return nil
	}
	return fmt.Errorf("%s is stamped hlc %d (%s), more than %s ahead of this device's clock: %w",
		what, hlc, store.HLCTime(hlc).UTC().Format("2006-01-02 15:04"), r.cfg.MaxClockSkew, memory.ErrClockAhead)
}

// checkOpStamps checks an incoming op's stamp and the stamp its record carries (an imported
// record keeps its own, which applying it would observe too).
func (r *Replica) checkOpStamps(op store.Op) error {
	what := fmt.Sprintf("op %s/%d", op.Origin, op.Seq)
	if err := r.checkStamp(what, op.HLC); err != nil {
		return err
	}
	if op.Payload == nil || op.Kind == store.OpForget || op.Kind == store.OpDevice {
		return nil
	}
	var peek struct {
		HLC uint64 `json:"hlc"`
	}
	_ = json.Unmarshal(op.Payload, &peek) // best effort: a bad payload fails in applyOne
	return r.checkStamp(what+" record "+op.RecordID, peek.HLC)
}

// clampCreated brings a created_at (epoch ms) beyond memory.MaxFutureAt back to it (the rule
// the node applies to an event's time): a record from the far future would sort first in
// every listing and context, for good.
func (r *Replica) clampCreated(at *int64) {
	if latest := r.cfg.Now().Add(memory.MaxFutureAt).UnixMilli(); *at > latest {
		*at = latest
	}
}

// clampBatch clamps the created_at of a batch's records (see clampCreated) before Commit
// plans it.
func (r *Replica) clampBatch(b *store.Batch) {
	for i := range b.Prompts {
		r.clampCreated(&b.Prompts[i].CreatedAt)
	}
	for i := range b.Observations {
		r.clampCreated(&b.Observations[i].CreatedAt)
	}
	for i := range b.Summaries {
		r.clampCreated(&b.Summaries[i].CreatedAt)
	}
}

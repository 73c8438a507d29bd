package node

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/memnode/memnode/internal/prio"
	"github.com/memnode/memnode/replica"
)

// setPhase records what the start does now ("opening the database", "checking the
// database", "migrating the database to schema 11", …) and counts the step.
func (n *Node) setPhase(p string) {
	n.phase.Store(&p)
	n.phaseSteps.Add(1)
	n.log.Debug("start phase", "phase", p)
}

// StartPhase is what the start does now, how many steps it has taken so far, and whether
// the phase is unbounded (a schema migration: it takes as long as the database is big, with
// no step between): /health reports them, and `memnode start` keeps waiting while the steps
// move on, or the phase is unbounded, and says what the node is doing. "ready" once ready.
func (n *Node) StartPhase() (phase string, steps uint64, unbounded bool) {
	p := n.phase.Load()
	if p == nil {
		return "", 0, false
	}
	return *p, n.phaseSteps.Load(), strings.HasPrefix(*p, replica.PhaseMigrating)
}

// checkInBackground reads the short-ID index ahead, then runs the full integrity check (replica.CheckIntegrity: SQLite's
// quick_check over the whole file, 8 s at 1M observations) that the open leaves out, on a
// lowered thread after the node is ready. A corrupt database found so is latched like one
// found by any read or write (corrupt.go): writes stop and status says to repair.
func (n *Node) checkInBackground(ctx context.Context, rep *replica.Replica) {
	if rep == nil {
		return
	}
	_ = prio.Lower() // best effort: the check yields the CPU to requests
	// First the short-ID index every context shows (a read of every record's key, ~3.5 s at
	// 1M on a loaded machine): the first session start after a start does not wait for it.
	if err := rep.WarmShortIDs(ctx); err != nil && ctx.Err() == nil {
		n.log.Warn("short-ID index not read ahead", "err", err)
	}
	t0 := time.Now()
	err := rep.CheckIntegrity(ctx)
	switch {
	case err == nil:
		n.log.Info("integrity check passed", "took", time.Since(t0).Round(time.Millisecond))
	case ctx.Err() != nil:
		// Stopped before it finished: the next start checks again.
	case errors.Is(err, replica.ErrCorrupt) || replica.IsCorrupt(err):
		n.log.Error("integrity check found the database corrupt", "err", err, "took", time.Since(t0).Round(time.Millisecond))
		n.checkCorrupt(err)
	default:
		n.log.Warn("integrity check did not run to the end", "err", err)
	}
}

package team

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

// TestVerifyAllSplitsWorkAndKeepsEachVerdict: verification on several goroutines gives
// every op its own verdict, forged ones refused wherever they fall in the batch, and leaves
// this device's own ops to the apply.
func TestVerifyAllSplitsWorkAndKeepsEachVerdict(t *testing.T) {
	key, origin := newKey(t)
	_, own := newKey(t)
	ops := make([]Op, 300)
	for i := range ops {
		ops[i] = Op{Origin: origin, TSeq: uint64(i + 1), Project: "p", Kind: store.OpObservation, RecordID: fmt.Sprint("r", i),
			HLC: uint64(i), Payload: []byte(fmt.Sprintf(`{"n":%d}`, i)), Author: "alice/laptop"}
		if err := sign(key, &ops[i]); err != nil {
			t.Fatal(err)
		}
	}
	forged := map[int]bool{0: true, 77: true, 150: true, 299: true}
	for i := range forged {
		ops[i].Payload = []byte(`{"n":"changed"}`)
	}
	ops[10].Origin = own // not checked here: the apply compares it with the outbox
	for _, workers := range []int{1, 4} {
		errs := verifyAll(ops, own, workers)
		for i, err := range errs {
			if want := forged[i]; (err != nil) != want || (err != nil && !errors.Is(err, ErrBadSignature)) {
				t.Fatalf("workers %d: op %d verdict %v, forged %v", workers, i, err, want)
			}
		}
	}
}

// TestTeamPullStoppedMidwayResumesExactlyOnce: a pull that fetches ahead and is stopped
// after some batches has applied exactly what its cursor says; the next pull brings the
// rest, every record once, and a third finds nothing.
func TestTeamPullStoppedMidwayResumesExactlyOnce(t *testing.T) {
	testkit.LeakCheck(t) // the fetching goroutine ends with the pull
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	const P, n = "pipeline", 300
	a := newMember(t, "alice", "laptop")
	a.join(t, c, P)
	batch := &store.Batch{}
	for j := 0; j < n; j++ {
		batch.Observations = append(batch.Observations, obs(P, fmt.Sprintf("piped %d", j), j))
	}
	if _, err := a.r.Commit(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := a.t.Push(ctx); err != nil {
		t.Fatal(err)
	}
	late := newTunedMember(t, "bob", "late", func(cfg *Config) { cfg.PullBatch, cfg.PullAhead, cfg.VerifyWorkers = 25, 3, 2 })
	late.join(t, c, P)

	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	var at Progress
	_, err := late.t.Pull(stop, func(p Progress) {
		if at = p; p.Done >= 75 {
			cancel() // the fetcher is batches ahead by now
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped pull: %v, want context.Canceled", err)
	}
	if got := late.count(t, P); got != at.Done || at.Done >= n {
		t.Fatalf("stopped after %+v but %d records applied", at, got)
	}
	// Mid-transfer, team status says how much is still to come down (issue 25: never 0
	// pending while records are still arriving).
	if st, err := late.t.Status(ctx); err != nil || st.PullLag != n-at.Done {
		t.Fatalf("status mid-transfer: pull lag %d (%v), want %d of %d still to pull", st.PullLag, err, n-at.Done, n)
	}
	got, err := late.t.Pull(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got != n-at.Done {
		t.Fatalf("second pull applied %d ops, want %d", got, n-at.Done)
	}
	var dup int
	if err := late.r.ReadDB().QueryRow(`SELECT COUNT(*) FROM (SELECT title FROM observations WHERE project = ? GROUP BY title HAVING COUNT(*) > 1)`, P).Scan(&dup); err != nil {
		t.Fatal(err)
	}
	if have := late.count(t, P); have != n || dup != 0 {
		t.Fatalf("after resuming: %d records (%d titles twice), want %d once each", have, dup, n)
	}
	if got, err := late.t.Pull(ctx, nil); err != nil || got != 0 {
		t.Fatalf("third pull applied %d (%v), want 0", got, err)
	}
	if st, err := late.t.Status(ctx); err != nil || st.PullLag != 0 || st.Rejected != 0 {
		t.Fatalf("status after catch-up: %+v %v", st, err)
	}
}

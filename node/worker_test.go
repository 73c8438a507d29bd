package node

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/hooks"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
)

// startDeferNode starts a node whose workers use the given deferral settings.
func startDeferNode(t *testing.T, lingerFor, maxDeferFor time.Duration, capAt int) *Node {
	t.Helper()
	return readyNode(t, Config{Settings: testSettings(), Linger: lingerFor, MaxDefer: maxDeferFor, DeferCap: capAt})
}

// testClock is a clock that stands still until the test moves it.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}

func (c *testClock) Now() time.Time      { return time.Unix(0, c.ns.Load()) }
func (c *testClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

func bashEvent(i int) apitype.Event {
	return apitype.Event{Kind: memory.KindObservation, SessionID: fmt.Sprintf("s%d", i%3), Project: "p", ToolName: "Bash",
		ToolInput:    json.RawMessage(fmt.Sprintf(`{"command":"go test ./pkg%d/..."}`, i)),
		ToolResponse: json.RawMessage(fmt.Sprintf(`{"stdout":"ok  pkg%d 0.%ds"}`, i, i%10)), At: time.Now()}
}

func observations(t *testing.T, n *Node) int {
	t.Helper()
	c, err := n.Replica().Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c.Observations
}

// While hook events keep arriving, workers leave them queued (acknowledging hooks gets the
// CPU); once the stream stops, everything is processed.
//
// The node's clock stands still during the burst, so no pause of the machine between two
// ingests (a loaded CI runner pauses for seconds) looks like the end of the burst: the
// workers, which measure the quiet by that clock, hold back for sure.
func TestWorkersWaitForABurstToEnd(t *testing.T) {
	const linger = time.Second
	clock := newTestClock()
	n := readyNode(t, Config{Settings: testSettings(), Linger: linger, MaxDefer: time.Hour, DeferCap: 1 << 30, Now: clock.Now})
	ctx := context.Background()
	const burst = 200
	for i := range burst {
		if rep, err := n.Ingest(ctx, bashEvent(i)); err != nil || rep.Status != "queued" {
			t.Fatalf("ingest %d: %+v %v", i, rep, err)
		}
	}
	if got := observations(t, n); got != 0 {
		t.Fatalf("%d observations made while the burst was still arriving, want none", got)
	}
	clock.Add(linger) // the burst is over
	// Queue rows go right after the commit of their records: wait for both.
	testkit.WaitFor(t, "the burst to be processed after it ended", 20*time.Second, func() bool {
		d, _ := n.Replica().QueueDepth(ctx)
		return observations(t, n) == burst && d == 0
	})
}

// A stream that never pauses is still processed: after MaxDefer a worker stops waiting.
func TestWorkersStopWaitingAfterMaxDefer(t *testing.T) {
	n := startDeferNode(t, time.Hour, 100*time.Millisecond, 1<<30)
	streamUntilProcessed(t, n)
}

// A stream that never pauses is still processed: once DeferCap events wait, workers run.
func TestWorkersStopWaitingAtDeferCap(t *testing.T) {
	n := startDeferNode(t, time.Hour, time.Hour, 50)
	streamUntilProcessed(t, n)
}

// streamUntilProcessed ingests events without pause until the first observation appears.
func streamUntilProcessed(t *testing.T, n *Node) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; observations(t, n) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no observation after %d events streamed for 20 s: workers never stopped waiting", i)
		}
		if _, err := n.Ingest(ctx, bashEvent(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// An event a hook spools while the node runs (it could not reach it for a moment) is
// replayed without waiting for the next start.
func TestSpoolWrittenWhileRunningIsReplayed(t *testing.T) {
	n := startDeferNode(t, 0, 0, 0)
	ev := bashEvent(7)
	ev.EventID = "spooled-while-running"
	if err := hooks.AppendSpool(n.cfg.DataDir, ev); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the spooled event to be stored", 20*time.Second, func() bool {
		return observations(t, n) == 1
	})
}

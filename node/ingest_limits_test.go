package node

import (
	"context"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
)

func TestEventTimeInTheFarFutureIsClamped(t *testing.T) {
	clock := newTestClock()
	now := clock.Now()
	n := readyNode(t, Config{Settings: testSettings(), Now: clock.Now})
	ctx := context.Background()
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if rep, err := n.Ingest(ctx, apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "p", Prompt: "from the future", At: far}); err != nil || !rep.OK {
		t.Fatalf("ingest: %+v %v", rep, err)
	}
	rep := n.Replica()
	clock.Add(time.Second) // past the workers' Linger: the node's clock is the test's
	testkit.WaitFor(t, "the prompt to be stored", 10*time.Second, func() bool {
		c, _ := rep.Counts(ctx)
		return c.Pending == 0 && c.Prompts == 1
	})
	var at int64
	if err := rep.ReadDB().QueryRowContext(ctx, "SELECT created_at FROM prompts").Scan(&at); err != nil {
		t.Fatal(err)
	}
	if want := now.Add(memory.MaxFutureAt).UnixMilli(); at != want {
		t.Fatalf("created_at = %s, want %s (now + %s)", time.UnixMilli(at).UTC(), time.UnixMilli(want).UTC(), memory.MaxFutureAt)
	}
}

package cli

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// TestForgetWinsTheQueueRace is issue 26's forget "done when": a session's events wait
// behind a 3 s fake AI provider (one is being built, the rest queued) when `memnode forget
// S<session>` runs (a worker's request for it waits at the provider, more of its events
// are queued behind the claim); it says it forgot the session, and after the queue drains (another
// session's events stored meanwhile) nothing of it is in any file of the data dir — 4 of 4
// rounds.
func TestForgetWinsTheQueueRace(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped in -short")
	}
	key := "sk-ant-test-" + strings.Repeat("r", 24)
	fake := e2ekit.NewFakeAnthropic(t, key, 3*time.Second)
	in := e2ekit.NewInstance(t)
	e2ekit.UseFakeAnthropic(t, in, key, fake.Url)
	in.Start()
	tok, url := in.Token(), fmt.Sprintf("http://127.0.0.1:%d/api/events", in.Port)
	post := func(ev []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(ev))
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("post event: %s", res.Status)
		}
	}
	db := in.Db()
	var gone []string // what must be in no file
	var lastKept string
	for round := 1; round <= 4; round++ {
		sid, keep := fmt.Sprintf("race-%d", round), fmt.Sprintf("keep-%d", round)
		word := fmt.Sprintf("quokkaraceword%d", round)
		postRace := func(from, to int) {
			for i := from; i < to; i++ {
				id := fmt.Sprintf("mk-%d%d%02d", round, 1, i)
				gone = append(gone, id)
				// Event IDs are opaque (seen_events keeps them against replays): the
				// content is what must go.
				post(e2ekit.ObservationEvent(fmt.Sprintf("ev-r%d-%d", round, i), sid, "race", "build "+word+" "+id))
			}
		}
		gone = append(gone, word)
		calls := fake.Requests.Load()
		postRace(0, 3)
		keepID := fmt.Sprintf("mk-%d%d00", round, 2)
		lastKept = keepID
		post(e2ekit.ObservationEvent(keepID, keep, "race", "build the kept "+keepID))
		// A worker is building the session (its request waits at the provider) while more
		// of its events queue behind the claim.
		testkit.WaitFor(t, fmt.Sprintf("round %d: a build at the provider", round), 30*time.Second, func() bool {
			return fake.Requests.Load() > calls
		})
		postRace(3, 6)
		if q := in.Queued(); q == 0 {
			t.Fatalf("round %d: the queue drained before the forget: the test proves nothing", round)
		}
		if out := in.MustRun(nil, "forget", "S"+sid); !strings.Contains(out, "forgot 1 of 1") {
			t.Fatalf("round %d: forget S%s: %s", round, sid, out)
		}
		testkit.WaitFor(t, fmt.Sprintf("round %d: the queue to drain and the kept session to be stored", round), 90*time.Second, func() bool {
			return in.Queued() == 0 && in.Count(db, "SELECT COUNT(*) FROM observations WHERE session_id = ? AND instr(title, ?) > 0", keep, keepID) == 1
		})
		for _, table := range []string{"observations", "prompts", "summaries"} {
			if n := in.Count(db, "SELECT COUNT(*) FROM "+table+" WHERE session_id = ?", sid); n != 0 {
				t.Errorf("round %d: %d %s of the forgotten session stored after the queue drained", round, n, table)
			}
		}
		if n := in.Count(db, "SELECT COUNT(*) FROM sessions WHERE id = ?", sid); n != 0 {
			t.Errorf("round %d: the forgotten session's row was stored", round)
		}
	}
	db.Close()
	in.MustRun(nil, "stop")
	// The kept sessions' records are in the files: the search below reads what was stored.
	if len(testkit.FilesContaining(t, in.DataDir, lastKept)) == 0 {
		t.Fatalf("no file of the data dir holds the kept record %s: the search reads nothing", lastKept)
	}
	for _, w := range gone {
		for _, f := range testkit.FilesContaining(t, in.DataDir, w) {
			t.Errorf("%s holds %q of a forgotten session", f, w)
		}
	}
	t.Logf("%d provider requests", fake.Requests.Load())
}

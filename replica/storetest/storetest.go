// Package storetest is the contract every memory store backend meets: the same cases run
// against the SQLite replica and against any later backend (litestream's
// RunWithReplicaClient is the model). A backend's test calls Run with a function that opens
// a fresh, empty store on real storage.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// Store is what the contract exercises: local commits, the op-log, remote ops, forget, the
// durable event queue, and the convergence oracle.
type Store interface {
	Origin() string
	Commit(ctx context.Context, b *replica.Batch) (replica.CommitResult, error)
	VersionVector(ctx context.Context) (replica.VersionVector, error)
	OpsSince(ctx context.Context, origin string, after uint64, limit int) ([]replica.Op, error)
	ApplyOps(ctx context.Context, ops []replica.Op) (replica.ApplyResult, error)
	Forget(ctx context.Context, ids []string) (int, error)
	GetObservations(ctx context.Context, ids []string) ([]memory.Observation, error)
	// CanonicalDump renders the replicated state deterministically: two stores have
	// converged exactly when their dumps are equal.
	CanonicalDump(ctx context.Context) (string, error)
	// OpPayloadContains reports whether any op payload still holds s.
	OpPayloadContains(ctx context.Context, s string) (bool, error)

	Enqueue(ctx context.Context, ev replica.PendingEvent) (dup bool, err error)
	ClaimSession(ctx context.Context, max int) (replica.Claim, error)
	Release(ctx context.Context, ids []int64) error
	Unclaim(sessionID string)
	QueueDepth(ctx context.Context) (int, error)
}

// Open opens a fresh, empty store whose op-log origin is origin, on storage of its own, and
// registers its closing with tb.Cleanup.
type Open func(tb testing.TB, origin string) Store

// Run runs every contract case against stores made by open.
func Run(t *testing.T, open Open) {
	cases := []struct {
		name string
		fn   func(*testing.T, Open)
	}{
		{"CommitIsIdempotent", testCommitIsIdempotent},
		{"OpLogAndVersionVector", testOpLogAndVersionVector},
		{"ApplyOpsDuplicatesAndOutOfOrder", testApplyOpsDuplicatesAndOutOfOrder},
		{"TombstoneWinsAndPurgesContent", testTombstoneWins},
		{"SessionsAreLWW", testSessionsAreLWW},
		{"QueueEnqueueClaimRelease", testQueue},
		{"CommitRefusesAStaleClaim", testStaleClaim},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, open) })
	}
}

func now() int64 { return time.Now().UnixMilli() }

func obs(session, title string) memory.Observation {
	return memory.Observation{SessionID: session, Project: "demo", Type: "discovery", Title: title,
		Narrative: "narrative of " + title, FilesRead: []string{"main.go"}, CreatedAt: now()}
}

func mustCommit(tb testing.TB, s Store, b *replica.Batch) replica.CommitResult {
	tb.Helper()
	res, err := s.Commit(context.Background(), b)
	if err != nil {
		tb.Fatalf("commit: %v", err)
	}
	return res
}

func allOps(tb testing.TB, s Store, origin string) []replica.Op {
	tb.Helper()
	ops, err := s.OpsSince(context.Background(), origin, 0, 1<<20)
	if err != nil {
		tb.Fatalf("ops since: %v", err)
	}
	return ops
}

func apply(tb testing.TB, s Store, ops []replica.Op) replica.ApplyResult {
	tb.Helper()
	res, err := s.ApplyOps(context.Background(), ops)
	if err != nil {
		tb.Fatalf("apply ops: %v", err)
	}
	return res
}

func dump(tb testing.TB, s Store) string {
	tb.Helper()
	d, err := s.CanonicalDump(context.Background())
	if err != nil {
		tb.Fatalf("dump: %v", err)
	}
	return d
}

func converged(tb testing.TB, stores ...Store) {
	tb.Helper()
	first := dump(tb, stores[0])
	for _, s := range stores[1:] {
		if d := dump(tb, s); d != first {
			tb.Fatalf("%s and %s differ:\n%s\n---\n%s", stores[0].Origin(), s.Origin(), first, d)
		}
	}
}

func testCommitIsIdempotent(t *testing.T, open Open) {
	ctx := context.Background()
	s := open(t, "dev-a")
	o := obs("s1", "retry loop in the uploader")
	b := &replica.Batch{
		Sessions:     []memory.Session{{ID: "s1", Project: "demo", StartedAt: now()}},
		Prompts:      []memory.Prompt{{SessionID: "s1", Project: "demo", PromptNumber: 1, Text: "why does it retry", CreatedAt: now()}},
		Observations: []memory.Observation{o, o},
		Summaries:    []memory.Summary{{SessionID: "s1", Project: "demo", Request: "retries", CreatedAt: now()}},
	}
	res := mustCommit(t, s, b)
	if len(res.Observations) != 1 || res.Duplicates != 1 || len(res.Prompts) != 1 || len(res.Summaries) != 1 {
		t.Fatalf("first commit = %+v; want 1 observation + 1 duplicate, 1 prompt, 1 summary", res)
	}
	stored := res.Observations[0]
	if stored.ID == "" || stored.Origin != "dev-a" || stored.HLC == 0 {
		t.Fatalf("stored observation lacks id/origin/hlc: %+v", stored)
	}
	got, err := s.GetObservations(ctx, []string{stored.ID, "no-such-id"})
	if err != nil || len(got) != 1 || got[0].Title != o.Title || !slices.Equal(got[0].FilesRead, o.FilesRead) {
		t.Fatalf("get observations = %+v %v", got, err)
	}
	vv1, err := s.VersionVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The same observation again (a retried batch): nothing stored, no op appended.
	again := mustCommit(t, s, &replica.Batch{Observations: []memory.Observation{o}})
	if len(again.Observations) != 0 || again.Duplicates != 1 {
		t.Fatalf("retried commit = %+v; want only a duplicate", again)
	}
	vv2, err := s.VersionVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if vv1["dev-a"] != vv2["dev-a"] || vv1["dev-a"] != 4 {
		t.Fatalf("version vector %v then %v; want dev-a:4 (session, prompt, observation, summary) both times", vv1, vv2)
	}
}

func testOpLogAndVersionVector(t *testing.T, open Open) {
	ctx := context.Background()
	s := open(t, "dev-a")
	for i := range 5 {
		mustCommit(t, s, &replica.Batch{Observations: []memory.Observation{obs("s1", fmt.Sprintf("finding %d", i))}})
	}
	ops := allOps(t, s, "dev-a")
	if len(ops) != 5 {
		t.Fatalf("%d ops, want 5", len(ops))
	}
	for i, op := range ops {
		if op.Origin != "dev-a" || op.Seq != uint64(i+1) || op.Kind != replica.OpObservation || op.RecordID == "" || len(op.Payload) == 0 {
			t.Fatalf("op %d = %+v; want contiguous seqs of dev-a observations with payloads", i, op)
		}
		if i > 0 && op.HLC <= ops[i-1].HLC {
			t.Fatalf("hlc not increasing: %d then %d", ops[i-1].HLC, op.HLC)
		}
	}
	page, err := s.OpsSince(ctx, "dev-a", 2, 2)
	if err != nil || len(page) != 2 || page[0].Seq != 3 || page[1].Seq != 4 {
		t.Fatalf("ops since 2, limit 2 = %+v %v; want seqs 3, 4", page, err)
	}
	if none, err := s.OpsSince(ctx, "dev-z", 0, 10); err != nil || len(none) != 0 {
		t.Fatalf("ops of an unknown origin = %+v %v", none, err)
	}
	vv, err := s.VersionVector(ctx)
	if err != nil || len(vv) != 1 || vv["dev-a"] != 5 {
		t.Fatalf("version vector = %v %v; want dev-a:5", vv, err)
	}
}

func testApplyOpsDuplicatesAndOutOfOrder(t *testing.T, open Open) {
	a, b := open(t, "dev-a"), open(t, "dev-b")
	mustCommit(t, a, &replica.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: now()}}})
	for i := range 4 {
		mustCommit(t, a, &replica.Batch{Observations: []memory.Observation{obs("s1", fmt.Sprintf("a finding %d", i))}})
	}
	ops := allOps(t, a, "dev-a") // seqs 1..5

	// Past a gap: skipped, and the vector does not move.
	if res := apply(t, b, []replica.Op{ops[2], ops[4]}); res.Applied != 0 || res.Gaps != 2 {
		t.Fatalf("ops past a gap: %+v; want 2 gaps", res)
	}
	// Reversed and repeated: only the in-order prefix applies in one call...
	rev := slices.Clone(ops)
	slices.Reverse(rev)
	res := apply(t, b, append(rev, ops[0], ops[0]))
	if res.Applied != 1 || res.Gaps != 4 || res.Duplicates != 2 {
		t.Fatalf("reversed ops: %+v; want seqs 5..2 past a gap, seq 1 applied, then 2 duplicates", res)
	}
	// ...and the rest arrives with duplicates mixed in.
	res = apply(t, b, append(append([]replica.Op{}, ops...), ops...))
	if res.Applied != 4 || res.Duplicates != 6 {
		t.Fatalf("ops twice over: %+v; want 4 applied, 6 duplicates", res)
	}
	vv, err := b.VersionVector(context.Background())
	if err != nil || vv["dev-a"] != 5 {
		t.Fatalf("b's vector = %v %v; want dev-a:5", vv, err)
	}
	// b relays what it holds, unchanged.
	if relayed := allOps(t, b, "dev-a"); !slices.EqualFunc(relayed, ops, func(x, y replica.Op) bool {
		return x.Seq == y.Seq && x.HLC == y.HLC && x.RecordID == y.RecordID && string(x.Payload) == string(y.Payload)
	}) {
		t.Fatalf("b relays %+v, want a's ops", relayed)
	}
	converged(t, a, b)
	// A malformed op is refused, not applied.
	if _, err := b.ApplyOps(context.Background(), []replica.Op{{Kind: replica.OpObservation}}); err == nil {
		t.Fatal("an op without origin and seq was accepted")
	}
}

func testTombstoneWins(t *testing.T, open Open) {
	ctx := context.Background()
	a, b, c := open(t, "dev-a"), open(t, "dev-b"), open(t, "dev-c")
	const secret = "wombat-secret-sauce"
	res := mustCommit(t, a, &replica.Batch{
		Sessions:     []memory.Session{{ID: "s1", Project: "demo", StartedAt: now()}},
		Observations: []memory.Observation{obs("s1", "recipe "+secret), obs("s1", "unrelated finding")},
	})
	target := res.Observations[0].ID
	aOps := allOps(t, a, "dev-a")
	apply(t, b, aOps)

	// b forgets; a receives the tombstone.
	if n, err := b.Forget(ctx, []string{target}); err != nil || n != 1 {
		t.Fatalf("forget = %d %v; want 1 known record", n, err)
	}
	bOps := allOps(t, b, "dev-b")
	apply(t, a, bOps)
	// c learns of the forget before the record: the later copy never resurrects it.
	apply(t, c, bOps)
	apply(t, c, aOps)
	for _, s := range []Store{a, b, c} {
		got, err := s.GetObservations(ctx, []string{target})
		if err != nil || len(got) != 0 {
			t.Fatalf("%s still returns the forgotten observation: %+v %v", s.Origin(), got, err)
		}
		if has, err := s.OpPayloadContains(ctx, secret); err != nil || has {
			t.Fatalf("%s: op-log still holds the forgotten text (%v, %v)", s.Origin(), has, err)
		}
		if d := dump(t, s); strings.Contains(d, secret) || !strings.Contains(d, "unrelated finding") {
			t.Fatalf("%s: dump after forget:\n%s", s.Origin(), d)
		}
	}
	converged(t, a, b, c)
	// A session forgotten takes everything in it, and a later commit to it stays forgotten.
	if _, err := a.Forget(ctx, []string{"s1"}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, a, &replica.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: now()}}})
	if d := dump(t, a); strings.Contains(d, "unrelated finding") || strings.Contains(d, "session\ts1") {
		t.Fatalf("forgotten session survives:\n%s", d)
	}
}

func testSessionsAreLWW(t *testing.T, open Open) {
	a, b := open(t, "dev-a"), open(t, "dev-b")
	start := now()
	mustCommit(t, a, &replica.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: start, Status: "active"}}})
	apply(t, b, allOps(t, a, "dev-a"))
	// b ends the session after it saw a's write: its stamp is later, so it wins everywhere,
	// whichever order the writes arrive in.
	mustCommit(t, b, &replica.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: start + 5, EndedAt: start + 10, Status: "ended"}}})
	c := open(t, "dev-c")
	apply(t, c, allOps(t, b, "dev-b"))
	apply(t, c, allOps(t, b, "dev-a"))
	apply(t, a, allOps(t, b, "dev-b"))
	converged(t, a, b, c)
	d := dump(t, a)
	if !strings.Contains(d, fmt.Sprintf("session\ts1\tdemo\t\t%d\t%d\tended\tdev-b\t", start, start+10)) {
		t.Fatalf("want s1 ended by dev-b with the earliest start kept:\n%s", d)
	}
}

func testQueue(t *testing.T, open Open) {
	ctx := context.Background()
	s := open(t, "dev-a")
	enqueue := func(id, session string) {
		t.Helper()
		dup, err := s.Enqueue(ctx, replica.PendingEvent{EventID: id, Kind: "observation", SessionID: session, Project: "demo",
			Payload: []byte(`{"id":"` + id + `"}`), CreatedAt: now()})
		if err != nil || dup {
			t.Fatalf("enqueue %s: dup=%v err=%v", id, dup, err)
		}
	}
	enqueue("e1", "s1")
	enqueue("e2", "s2")
	enqueue("e3", "s1")
	if dup, err := s.Enqueue(ctx, replica.PendingEvent{EventID: "e1", Kind: "observation", SessionID: "s1", Payload: []byte("{}")}); err != nil || !dup {
		t.Fatalf("re-enqueue of e1: dup=%v err=%v; want a duplicate", dup, err)
	}
	if _, err := s.Enqueue(ctx, replica.PendingEvent{SessionID: "s1"}); err == nil {
		t.Fatal("an event without an ID was queued")
	}
	if d, err := s.QueueDepth(ctx); err != nil || d != 3 {
		t.Fatalf("depth = %d %v, want 3", d, err)
	}
	// The oldest session, its events in arrival order; a claimed session is not handed out twice.
	c1, err := s.ClaimSession(ctx, 10)
	if err != nil || c1.SessionID != "s1" || len(c1.Events) != 2 || c1.Events[0].EventID != "e1" || c1.Events[1].EventID != "e3" {
		t.Fatalf("first claim = %+v %v; want s1: e1, e3", c1, err)
	}
	c2, err := s.ClaimSession(ctx, 10)
	if err != nil || c2.SessionID != "s2" || len(c2.Events) != 1 {
		t.Fatalf("second claim = %+v %v; want s2", c2, err)
	}
	if c3, err := s.ClaimSession(ctx, 10); err != nil || len(c3.Events) != 0 {
		t.Fatalf("third claim = %+v %v; want nothing claimable", c3, err)
	}
	// A failed attempt: the events stay queued, counted, and are claimable again.
	if err := s.Release(ctx, []int64{c2.Events[0].ID}); err != nil {
		t.Fatal(err)
	}
	s.Unclaim("s2")
	again, err := s.ClaimSession(ctx, 10)
	if err != nil || again.SessionID != "s2" || len(again.Events) != 1 || again.Events[0].Attempts != 1 {
		t.Fatalf("claim after release = %+v %v; want s2 with one attempt", again, err)
	}
	s.Unclaim("s2")
	// Committing a claim removes its rows and remembers its events: a replay is a duplicate.
	var done []int64
	var events []string
	for _, ev := range c1.Events {
		done, events = append(done, ev.ID), append(events, ev.EventID)
	}
	mustCommit(t, s, &replica.Batch{Observations: []memory.Observation{obs("s1", "from the queue")}, Done: done, DoneEvents: events})
	s.Unclaim("s1")
	if d, err := s.QueueDepth(ctx); err != nil || d != 1 {
		t.Fatalf("depth after commit = %d %v, want 1", d, err)
	}
	if dup, err := s.Enqueue(ctx, replica.PendingEvent{EventID: "e3", Kind: "observation", SessionID: "s1", Payload: []byte("{}")}); err != nil || !dup {
		t.Fatalf("replay of a stored event: dup=%v err=%v; want a duplicate", dup, err)
	}
	if c, err := s.ClaimSession(ctx, 10); err != nil || c.SessionID != "s2" {
		t.Fatalf("claim after commit = %+v %v; want only s2 left", c, err)
	}
}

// testStaleClaim: a batch built from a session's state (Batch.Claimed) is refused whole
// when a forget changed that state before the commit — here the forget of the prompt of the
// session's current turn, which makes the turn private and drops the prompt's text — and a
// batch built from the state as the forget left it commits.
func testStaleClaim(t *testing.T, open Open) {
	ctx := context.Background()
	s := open(t, "dev-a")
	const text = "rotate the wombat keys"
	claimed := replica.SessionState{SessionID: "s1", PromptCount: 1, FirstPrompt: text, LastPrompt: text}
	res := mustCommit(t, s, &replica.Batch{
		Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: now()}},
		Prompts:  []memory.Prompt{{SessionID: "s1", Project: "demo", PromptNumber: 1, Text: text, CreatedAt: now()}},
		States:   []replica.SessionState{claimed},
	})
	if n, err := s.Forget(ctx, []string{res.Prompts[0].ID}); err != nil || n != 1 {
		t.Fatalf("forget = %d %v; want the prompt", n, err)
	}
	o := obs("s1", "wombat key rotation")
	o.PromptNumber = 1
	_, err := s.Commit(ctx, &replica.Batch{Claimed: []replica.SessionState{claimed},
		Observations: []memory.Observation{o}, States: []replica.SessionState{claimed}})
	if !errors.Is(err, replica.ErrStaleClaim) {
		t.Fatalf("commit of a batch built before the forget: %v, want ErrStaleClaim", err)
	}
	if d := dump(t, s); strings.Contains(d, "wombat") {
		t.Fatalf("a refused batch left records:\n%s", d)
	}
	after := replica.SessionState{SessionID: "s1", PromptCount: 1, TurnPrivate: true}
	next := obs("s1", "next turn's finding")
	next.PromptNumber = 2
	mustCommit(t, s, &replica.Batch{Claimed: []replica.SessionState{after}, Observations: []memory.Observation{next},
		States: []replica.SessionState{{SessionID: "s1", PromptCount: 2}}})
	if d := dump(t, s); !strings.Contains(d, "next turn's finding") {
		t.Fatalf("a batch built from the current state was not stored:\n%s", d)
	}
}

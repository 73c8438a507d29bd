// Package storetest is the contract every memory store backend meets: the same cases run
// against the SQLite replica, against the in-memory store (store/memstore), and against any
// later backend (litestream's RunWithReplicaClient is the model). A backend's test calls
// Run with a function that opens a fresh, empty store on storage of its own.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/search"
	"github.com/memnode/memnode/store"
)

// Store is what the contract exercises: local commits, the op-log, remote ops, forget, the
// durable event queue, the convergence oracle, and the index reads search ranks over.
type Store interface {
	Origin() string
	Commit(ctx context.Context, b *store.Batch) (store.CommitResult, error)
	VersionVector(ctx context.Context) (store.VersionVector, error)
	OpsSince(ctx context.Context, origin string, after uint64, limit int) ([]store.Op, error)
	ApplyOps(ctx context.Context, ops []store.Op) (store.ApplyResult, error)
	Forget(ctx context.Context, ids []string) (int, error)
	GetObservations(ctx context.Context, ids []string) ([]memory.Observation, error)
	// CanonicalDump renders the replicated state deterministically: two stores have
	// converged exactly when their dumps are equal.
	CanonicalDump(ctx context.Context) (string, error)
	// OpPayloadContains reports whether any op payload still holds s.
	OpPayloadContains(ctx context.Context, s string) (bool, error)

	Enqueue(ctx context.Context, ev store.PendingEvent) (dup bool, err error)
	ClaimSession(ctx context.Context, max int) (store.Claim, error)
	Release(ctx context.Context, ids []int64) error
	Unclaim(sessionID string)
	QueueDepth(ctx context.Context) (int, error)

	SetDeviceName(ctx context.Context, origin, name string) error
	// The index reads search ranks over.
	search.Index
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
		{"IndexReads", testIndexReads},
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

func mustCommit(tb testing.TB, s Store, b *store.Batch) store.CommitResult {
	tb.Helper()
	res, err := s.Commit(context.Background(), b)
	if err != nil {
		tb.Fatalf("commit: %v", err)
	}
	return res
}

func allOps(tb testing.TB, s Store, origin string) []store.Op {
	tb.Helper()
	ops, err := s.OpsSince(context.Background(), origin, 0, 1<<20)
	if err != nil {
		tb.Fatalf("ops since: %v", err)
	}
	return ops
}

func apply(tb testing.TB, s Store, ops []store.Op) store.ApplyResult {
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
	b := &store.Batch{
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
	again := mustCommit(t, s, &store.Batch{Observations: []memory.Observation{o}})
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
		mustCommit(t, s, &store.Batch{Observations: []memory.Observation{obs("s1", fmt.Sprintf("finding %d", i))}})
	}
	ops := allOps(t, s, "dev-a")
	if len(ops) != 5 {
		t.Fatalf("%d ops, want 5", len(ops))
	}
	for i, op := range ops {
		if op.Origin != "dev-a" || op.Seq != uint64(i+1) || op.Kind != store.OpObservation || op.RecordID == "" || len(op.Payload) == 0 {
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
	mustCommit(t, a, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: now()}}})
	for i := range 4 {
		mustCommit(t, a, &store.Batch{Observations: []memory.Observation{obs("s1", fmt.Sprintf("a finding %d", i))}})
	}
	ops := allOps(t, a, "dev-a") // seqs 1..5

	// Past a gap: skipped, and the vector does not move.
	if res := apply(t, b, []store.Op{ops[2], ops[4]}); res.Applied != 0 || res.Gaps != 2 {
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
	res = apply(t, b, append(append([]store.Op{}, ops...), ops...))
	if res.Applied != 4 || res.Duplicates != 6 {
		t.Fatalf("ops twice over: %+v; want 4 applied, 6 duplicates", res)
	}
	vv, err := b.VersionVector(context.Background())
	if err != nil || vv["dev-a"] != 5 {
		t.Fatalf("b's vector = %v %v; want dev-a:5", vv, err)
	}
	// b relays what it holds, unchanged.
	if relayed := allOps(t, b, "dev-a"); !slices.EqualFunc(relayed, ops, func(x, y store.Op) bool {
		return x.Seq == y.Seq && x.HLC == y.HLC && x.RecordID == y.RecordID && string(x.Payload) == string(y.Payload)
	}) {
		t.Fatalf("b relays %+v, want a's ops", relayed)
	}
	converged(t, a, b)
	// A malformed op is refused, not applied.
	if _, err := b.ApplyOps(context.Background(), []store.Op{{Kind: store.OpObservation}}); err == nil {
		t.Fatal("an op without origin and seq was accepted")
	}
}

func testTombstoneWins(t *testing.T, open Open) {
	ctx := context.Background()
	a, b, c := open(t, "dev-a"), open(t, "dev-b"), open(t, "dev-c")
	const secret = "wombat-secret-sauce"
	res := mustCommit(t, a, &store.Batch{
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
	mustCommit(t, a, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: now()}}})
	if d := dump(t, a); strings.Contains(d, "unrelated finding") || strings.Contains(d, "session\ts1") {
		t.Fatalf("forgotten session survives:\n%s", d)
	}
}

func testSessionsAreLWW(t *testing.T, open Open) {
	a, b := open(t, "dev-a"), open(t, "dev-b")
	start := now()
	mustCommit(t, a, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: start, Status: "active"}}})
	apply(t, b, allOps(t, a, "dev-a"))
	// b ends the session after it saw a's write: its stamp is later, so it wins everywhere,
	// whichever order the writes arrive in.
	mustCommit(t, b, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: start + 5, EndedAt: start + 10, Status: "ended"}}})
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
		dup, err := s.Enqueue(ctx, store.PendingEvent{EventID: id, Kind: "observation", SessionID: session, Project: "demo",
			Payload: []byte(`{"id":"` + id + `"}`), CreatedAt: now()})
		if err != nil || dup {
			t.Fatalf("enqueue %s: dup=%v err=%v", id, dup, err)
		}
	}
	enqueue("e1", "s1")
	enqueue("e2", "s2")
	enqueue("e3", "s1")
	if dup, err := s.Enqueue(ctx, store.PendingEvent{EventID: "e1", Kind: "observation", SessionID: "s1", Payload: []byte("{}")}); err != nil || !dup {
		t.Fatalf("re-enqueue of e1: dup=%v err=%v; want a duplicate", dup, err)
	}
	if _, err := s.Enqueue(ctx, store.PendingEvent{SessionID: "s1"}); err == nil {
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
	mustCommit(t, s, &store.Batch{Observations: []memory.Observation{obs("s1", "from the queue")}, Done: done, DoneEvents: events})
	s.Unclaim("s1")
	if d, err := s.QueueDepth(ctx); err != nil || d != 1 {
		t.Fatalf("depth after commit = %d %v, want 1", d, err)
	}
	if dup, err := s.Enqueue(ctx, store.PendingEvent{EventID: "e3", Kind: "observation", SessionID: "s1", Payload: []byte("{}")}); err != nil || !dup {
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
	claimed := store.SessionState{SessionID: "s1", PromptCount: 1, FirstPrompt: text, LastPrompt: text}
	res := mustCommit(t, s, &store.Batch{
		Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: now()}},
		Prompts:  []memory.Prompt{{SessionID: "s1", Project: "demo", PromptNumber: 1, Text: text, CreatedAt: now()}},
		States:   []store.SessionState{claimed},
	})
	if n, err := s.Forget(ctx, []string{res.Prompts[0].ID}); err != nil || n != 1 {
		t.Fatalf("forget = %d %v; want the prompt", n, err)
	}
	o := obs("s1", "wombat key rotation")
	o.PromptNumber = 1
	_, err := s.Commit(ctx, &store.Batch{Claimed: []store.SessionState{claimed},
		Observations: []memory.Observation{o}, States: []store.SessionState{claimed}})
	if !errors.Is(err, store.ErrStaleClaim) {
		t.Fatalf("commit of a batch built before the forget: %v, want ErrStaleClaim", err)
	}
	if d := dump(t, s); strings.Contains(d, "wombat") {
		t.Fatalf("a refused batch left records:\n%s", d)
	}
	after := store.SessionState{SessionID: "s1", PromptCount: 1, TurnPrivate: true}
	next := obs("s1", "next turn's finding")
	next.PromptNumber = 2
	mustCommit(t, s, &store.Batch{Claimed: []store.SessionState{after}, Observations: []memory.Observation{next},
		States: []store.SessionState{{SessionID: "s1", PromptCount: 2}}})
	if d := dump(t, s); !strings.Contains(d, "next turn's finding") {
		t.Fatalf("a batch built from the current state was not stored:\n%s", d)
	}
}

// indexFixture is the state testIndexReads reads: three observations committed on dev-a in
// one batch (so stored one after another), a fourth from dev-b, two summaries and a prompt.
type indexFixture struct {
	base           int64
	o1, o2, o3, o4 memory.Observation
	sum1, sum2     memory.Summary
	p1             memory.Prompt
}

func byTitle(tb testing.TB, obs []memory.Observation, title string) memory.Observation {
	tb.Helper()
	for _, o := range obs {
		if o.Title == title {
			return o
		}
	}
	tb.Fatalf("no stored observation titled %q", title)
	return memory.Observation{}
}

func indexSetup(t *testing.T, open Open) (Store, indexFixture) {
	t.Helper()
	ctx := context.Background()
	a, b := open(t, "dev-a"), open(t, "dev-b")
	f := indexFixture{base: now() - 100_000}
	at := func(ms int64) int64 { return f.base + ms }
	if err := a.SetDeviceName(ctx, "dev-a", "laptop"); err != nil {
		t.Fatal(err)
	}
	res := mustCommit(t, a, &store.Batch{
		Sessions: []memory.Session{
			{ID: "s1", Project: "demo", Platform: "claude-code", StartedAt: at(0), Status: "active"},
			{ID: "s2", Project: "other", Platform: "codex", StartedAt: at(10), Status: "active"},
			{ID: "s3", Project: "demo", StartedAt: at(20), Status: "active"},
		},
		Prompts: []memory.Prompt{{SessionID: "s1", Project: "demo", PromptNumber: 1, Text: "why does the webhook storm", CreatedAt: at(500)}},
		Observations: []memory.Observation{
			{SessionID: "s1", Project: "demo", Type: "discovery", Title: "webhook retry storm", Narrative: "the uploader retries",
				FilesRead: []string{"src/api/main.go"}, CreatedAt: at(1000)},
			{SessionID: "s1", Project: "demo", Type: "change", Title: "fixed the uploader backoff", Narrative: "webhook backoff doubled",
				FilesModified: []string{"cmd/tool/main.go"}, CreatedAt: at(2000)},
			{SessionID: "s2", Project: "other", Type: "discovery", Title: "webhook signature check", Narrative: "hmac of the body",
				CreatedAt: at(3000)},
		},
		Summaries: []memory.Summary{
			{SessionID: "s1", Project: "demo", Request: "tame the webhook storm", CreatedAt: at(4000)},
			{SessionID: "s1", Project: "demo", Request: "second pass", Completed: "backoff tuned", CreatedAt: at(5000)},
		},
	})
	if len(res.Observations) != 3 || len(res.Summaries) != 2 || len(res.Prompts) != 1 {
		t.Fatalf("fixture commit = %+v", res)
	}
	f.o1 = byTitle(t, res.Observations, "webhook retry storm")
	f.o2 = byTitle(t, res.Observations, "fixed the uploader backoff")
	f.o3 = byTitle(t, res.Observations, "webhook signature check")
	f.sum1, f.sum2, f.p1 = res.Summaries[0], res.Summaries[1], res.Prompts[0]
	if f.sum1.Request != "tame the webhook storm" {
		f.sum1, f.sum2 = f.sum2, f.sum1
	}
	resB := mustCommit(t, b, &store.Batch{Observations: []memory.Observation{{SessionID: "s9", Project: "demo", Type: "discovery",
		Title: "webhook from the desktop", Narrative: "seen on the other device", CreatedAt: at(6000)}}})
	f.o4 = resB.Observations[0]
	apply(t, a, allOps(t, b, "dev-b"))
	return a, f
}

// ids lists the hits' IDs in order.
func ids(hits []store.IndexHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func idsOf(obs ...memory.Observation) []string {
	out := make([]string, len(obs))
	for i, o := range obs {
		out[i] = o.ID
	}
	return out
}

func testIndexReads(t *testing.T, open Open) {
	ctx := context.Background()
	s, f := indexSetup(t, open)
	const webhook = `"webhook"`
	obsKind := store.OpObservation

	t.Run("CountMatches", func(t *testing.T) {
		for _, c := range []struct {
			kind, match string
			max, want   int
		}{
			{obsKind, webhook, 10, 4}, {obsKind, webhook, 2, 2}, {obsKind, `"zzqxv"`, 10, 0},
			{store.OpSummary, webhook, 10, 1}, {store.OpPrompt, webhook, 10, 1},
		} {
			if n, err := s.CountMatches(ctx, c.kind, c.match, c.max); err != nil || n != c.want {
				t.Errorf("count %s %s max %d = %d %v; want %d", c.kind, c.match, c.max, n, err, c.want)
			}
		}
		if _, err := s.CountMatches(ctx, "nope", webhook, 10); err == nil {
			t.Error("an unknown kind was counted")
		}
	})

	t.Run("ListRecordsAndFilters", func(t *testing.T) {
		list := func(kind string, flt store.SearchFilter, oldest bool, limit int) []string {
			t.Helper()
			hits, err := s.ListRecords(ctx, kind, flt, oldest, limit)
			if err != nil {
				t.Fatalf("list %s %+v: %v", kind, flt, err)
			}
			return ids(hits)
		}
		for _, c := range []struct {
			name   string
			flt    store.SearchFilter
			oldest bool
			limit  int
			want   []string
		}{
			{"newest", store.SearchFilter{}, false, 10, idsOf(f.o4, f.o3, f.o2, f.o1)},
			{"oldest", store.SearchFilter{}, true, 2, idsOf(f.o1, f.o2)},
			{"project", store.SearchFilter{Project: "other"}, false, 10, idsOf(f.o3)},
			{"types", store.SearchFilter{Types: []string{"change", "bugfix"}}, false, 10, idsOf(f.o2)},
			{"basename", store.SearchFilter{File: "main.go"}, false, 10, idsOf(f.o2, f.o1)},
			{"relative path", store.SearchFilter{File: "api/main.go"}, false, 10, idsOf(f.o1)},
			{"dot path", store.SearchFilter{File: "./src/api/main.go"}, false, 10, idsOf(f.o1)},
			{"part of a name", store.SearchFilter{File: "ain.go"}, false, 10, idsOf()},
			{"platform", store.SearchFilter{Platform: "codex"}, false, 10, idsOf(f.o3)},
			{"time range", store.SearchFilter{Since: f.o2.CreatedAt, Until: f.o3.CreatedAt + 1}, false, 10, idsOf(f.o3, f.o2)},
			{"device by origin", store.SearchFilter{Device: "dev-b"}, false, 10, idsOf(f.o4)},
			{"device by name", store.SearchFilter{Device: "laptop", Project: "demo"}, false, 10, idsOf(f.o2, f.o1)},
		} {
			if got := list(obsKind, c.flt, c.oldest, c.limit); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		if got := list(store.OpSummary, store.SearchFilter{File: "main.go"}, false, 10); len(got) != 0 {
			t.Errorf("a file filter on summaries kept %v: only observations touch files", got)
		}
		if got := list(store.OpSummary, store.SearchFilter{Types: []string{"change"}}, false, 10); len(got) != 2 {
			t.Errorf("observation types filtered summaries: %v", got)
		}
		hits, err := s.ListRecords(ctx, obsKind, store.SearchFilter{}, true, 1)
		if err != nil || len(hits) != 1 {
			t.Fatalf("oldest observation: %+v %v", hits, err)
		}
		want := store.IndexHit{ID: f.o1.ID, Time: f.o1.CreatedAt, Type: "discovery", Title: f.o1.Title, Project: "demo",
			SessionID: "s1", Origin: "dev-a", Device: "laptop"}
		if hits[0] != want {
			t.Errorf("hit = %+v, want %+v", hits[0], want)
		}
		sums, err := s.ListRecords(ctx, store.OpSummary, store.SearchFilter{}, false, 10)
		if err != nil || len(sums) != 2 || sums[0].ID != f.sum2.ID || sums[0].Type != "session" || sums[0].Title != "second pass" {
			t.Errorf("summaries = %+v %v; want the newest first, typed session, titled by the request", sums, err)
		}
		prompts, err := s.ListRecords(ctx, store.OpPrompt, store.SearchFilter{Project: "demo"}, false, 10)
		if err != nil || len(prompts) != 1 || prompts[0].Type != "prompt" || prompts[0].Title != f.p1.Text {
			t.Errorf("prompts = %+v %v; want the prompt, typed prompt, titled by its text", prompts, err)
		}
	})

	t.Run("WindowMatches", func(t *testing.T) {
		win := func(q store.WindowQuery) []store.IndexHit {
			t.Helper()
			hits, err := s.WindowMatches(ctx, obsKind, q)
			if err != nil {
				t.Fatalf("window %+v: %v", q, err)
			}
			return hits
		}
		ranked := win(store.WindowQuery{Match: webhook, Window: 10, Limit: 10})
		if len(ranked) != 4 {
			t.Fatalf("ranked = %+v; want the 4 matches", ranked)
		}
		for i, h := range ranked {
			if h.Score >= 0 || (i > 0 && h.Score < ranked[i-1].Score) {
				t.Fatalf("ranked hits not ordered by a negative bm25: %+v", ranked)
			}
		}
		for _, c := range []struct {
			name string
			q    store.WindowQuery
			want []string
		}{
			{"newest", store.WindowQuery{Match: webhook, Window: 10, Order: store.Newest, Limit: 10}, idsOf(f.o4, f.o3, f.o2, f.o1)},
			{"window of the newest", store.WindowQuery{Match: webhook, Window: 2, Order: store.Newest, Limit: 10}, idsOf(f.o4, f.o3)},
			{"window of the oldest", store.WindowQuery{Match: webhook, Window: 2, Order: store.Oldest, Limit: 10}, idsOf(f.o1, f.o2)},
			{"limit", store.WindowQuery{Match: webhook, Window: 10, Order: store.Oldest, Limit: 3}, idsOf(f.o1, f.o2, f.o3)},
			{"also", store.WindowQuery{Match: webhook, Also: `"uploader"`, Window: 10, Order: store.Newest, Limit: 10}, idsOf(f.o2, f.o1)},
			{"filter", store.WindowQuery{Match: webhook, Filter: store.SearchFilter{Project: "other"}, Window: 10, Limit: 10}, idsOf(f.o3)},
		} {
			if got := ids(win(c.q)); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	})

	t.Run("WindowTitles", func(t *testing.T) {
		const bonus = 1e-3
		hits, err := s.WindowTitles(ctx, obsKind, store.WindowQuery{Match: webhook, Window: 10, Limit: 10}, []string{"webhook"}, bonus)
		if err != nil || !slices.Equal(ids(hits), idsOf(f.o4, f.o3, f.o1, f.o2)) {
			t.Fatalf("titles = %v %v; want the title matches newest first, then the rest", ids(hits), err)
		}
		if hits[0].Score != -bonus || hits[3].Score != 0 {
			t.Errorf("scores %v and %v; want %v for a title word, 0 without", hits[0].Score, hits[3].Score, -bonus)
		}
		plain, err := s.WindowTitles(ctx, obsKind, store.WindowQuery{Match: webhook, Window: 2, Order: store.Oldest, Limit: 10}, nil, bonus)
		if err != nil || !slices.Equal(ids(plain), idsOf(f.o1, f.o2)) {
			t.Errorf("no title words, oldest window of 2 = %v %v", ids(plain), err)
		}
	})

	t.Run("BestMatches", func(t *testing.T) {
		hits, err := s.BestMatches(ctx, obsKind, webhook, store.SearchFilter{Project: "demo"}, 10)
		if err != nil || len(hits) != 3 {
			t.Fatalf("best = %+v %v; want o1, o2, o4", hits, err)
		}
		pos := map[string]int64{}
		for _, h := range hits {
			if h.Score >= 0 {
				t.Errorf("%s scored %v, want a negative bm25", h.ID, h.Score)
			}
			pos[h.ID] = h.Pos
		}
		got := slices.Sorted(maps.Keys(pos))
		if want := slices.Sorted(slices.Values(idsOf(f.o1, f.o2, f.o4))); !slices.Equal(got, want) {
			t.Fatalf("best = %v, want %v", got, want)
		}
		if pos[f.o2.ID] != pos[f.o1.ID]+1 {
			t.Errorf("positions %v: o1 and o2 were stored one after another", pos)
		}
		if one, err := s.BestMatches(ctx, obsKind, webhook, store.SearchFilter{}, 1); err != nil || len(one) != 1 {
			t.Errorf("limit 1 = %+v %v", one, err)
		}
	})

	t.Run("HitsByID", func(t *testing.T) {
		var asked []string
		for i := range 140 { // more than one statement's worth
			asked = append(asked, fmt.Sprintf("no-such-%d", i))
		}
		asked = append(asked, f.o3.ID, f.sum1.ID, f.o1.ID)
		hits, err := s.HitsByID(ctx, obsKind, asked, store.SearchFilter{})
		if got := slices.Sorted(slices.Values(ids(hits))); err != nil || !slices.Equal(got, slices.Sorted(slices.Values(idsOf(f.o1, f.o3)))) {
			t.Errorf("hits by id = %v %v; want o1 and o3 only", got, err)
		}
		hits, err = s.HitsByID(ctx, obsKind, asked, store.SearchFilter{Project: "demo"})
		if err != nil || !slices.Equal(ids(hits), idsOf(f.o1)) {
			t.Errorf("hits by id in demo = %v %v; want o1", ids(hits), err)
		}
		if none, err := s.HitsByID(ctx, obsKind, nil, store.SearchFilter{}); err != nil || len(none) != 0 {
			t.Errorf("no IDs = %v %v", none, err)
		}
	})

	t.Run("RecordsAround", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			at     int64
			id     string
			before bool
			n      int
			want   []string
		}{
			{"before a record", f.o2.CreatedAt, f.o2.ID, true, 10, idsOf(f.o1)},
			{"after a record", f.o2.CreatedAt, f.o2.ID, false, 10, idsOf(f.o3, f.o4)},
			{"after, nearest first", f.o2.CreatedAt, f.o2.ID, false, 1, idsOf(f.o3)},
			{"before a time", f.o2.CreatedAt, "", true, 10, idsOf(f.o1)},
			{"after a time", f.o2.CreatedAt, "", false, 10, idsOf(f.o2, f.o3, f.o4)},
		} {
			hits, err := s.RecordsAround(ctx, obsKind, store.SearchFilter{}, c.at, c.id, c.before, c.n)
			if err != nil || !slices.Equal(ids(hits), c.want) {
				t.Errorf("%s: %v %v, want %v", c.name, ids(hits), err, c.want)
			}
		}
		hits, err := s.RecordsAround(ctx, obsKind, store.SearchFilter{Project: "demo"}, f.o2.CreatedAt, f.o2.ID, false, 10)
		if err != nil || !slices.Equal(ids(hits), idsOf(f.o4)) {
			t.Errorf("after o2 in demo: %v %v, want o4", ids(hits), err)
		}
	})

	t.Run("HitByIDAndSessions", func(t *testing.T) {
		if h, ok, err := s.HitByID(ctx, obsKind, f.o3.ID); err != nil || !ok || h.Title != f.o3.Title || h.SessionID != "s2" || h.Time != f.o3.CreatedAt {
			t.Errorf("hit o3 = %+v %v %v", h, ok, err)
		}
		if h, ok, err := s.HitByID(ctx, store.OpSummary, f.sum1.ID); err != nil || !ok || h.Type != "session" || h.Title != f.sum1.Request {
			t.Errorf("hit sum1 = %+v %v %v", h, ok, err)
		}
		if h, ok, err := s.HitByID(ctx, store.OpPrompt, f.p1.ID); err != nil || !ok || h.Type != "prompt" || h.Title != f.p1.Text {
			t.Errorf("hit p1 = %+v %v %v", h, ok, err)
		}
		if _, ok, err := s.HitByID(ctx, obsKind, f.sum1.ID); err != nil || ok {
			t.Errorf("a summary's ID found as an observation (%v, %v)", ok, err)
		}
		if h, ok, err := s.LatestSummaryHit(ctx, "s1"); err != nil || !ok || h.ID != f.sum2.ID {
			t.Errorf("latest summary of s1 = %+v %v %v; want sum2", h, ok, err)
		}
		if _, ok, err := s.LatestSummaryHit(ctx, "s2"); err != nil || ok {
			t.Errorf("s2 has no summary, got one (%v)", err)
		}
		if at, ok, err := s.SessionStart(ctx, "s3"); err != nil || !ok || at != f.base+20 {
			t.Errorf("start of s3 = %d %v %v; want %d", at, ok, err, f.base+20)
		}
		if _, ok, err := s.SessionStart(ctx, "no-such-session"); err != nil || ok {
			t.Errorf("an unknown session started (%v)", err)
		}
	})

	t.Run("ForgottenLeavesTheIndex", func(t *testing.T) {
		if _, err := s.Forget(ctx, []string{f.o3.ID}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.CountMatches(ctx, obsKind, `"hmac"`, 10); err != nil || n != 0 {
			t.Errorf("the forgotten text still matches %d rows (%v)", n, err)
		}
		if _, ok, err := s.HitByID(ctx, obsKind, f.o3.ID); err != nil || ok {
			t.Errorf("the forgotten record is still found (%v)", err)
		}
		hits, err := s.WindowMatches(ctx, obsKind, store.WindowQuery{Match: webhook, Window: 10, Order: store.Newest, Limit: 10})
		if err != nil || !slices.Equal(ids(hits), idsOf(f.o4, f.o2, f.o1)) {
			t.Errorf("matches after forget = %v %v", ids(hits), err)
		}
	})
}

package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/ai/offline"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

// fakeSessions is a Sessions of function fields; nil fields answer "unknown, nothing".
type fakeSessions struct {
	state func(id string) (store.SessionState, bool, error)
	obs   func(id string) ([]memory.Observation, error)
}

var _ Sessions = fakeSessions{}

func (f fakeSessions) SessionState(_ context.Context, id string) (store.SessionState, bool, error) {
	if f.state == nil {
		return store.SessionState{SessionID: id}, false, nil
	}
	return f.state(id)
}

func (f fakeSessions) SessionObservations(_ context.Context, id string, _ int) ([]memory.Observation, error) {
	if f.obs == nil {
		return nil, nil
	}
	return f.obs(id)
}

// fakeStore is a Store of function fields for Ingest; claims and commits are not used.
type fakeStore struct {
	fakeSessions
	enqueue func(ev store.PendingEvent) (bool, error)
	prompt  func(sessionID string) (store.PendingEvent, bool, error)
}

var _ Store = fakeStore{}

func (f fakeStore) Enqueue(_ context.Context, ev store.PendingEvent) (bool, error) {
	return f.enqueue(ev)
}
func (fakeStore) QueueDepth(context.Context) (int, error) { return 0, nil }
func (fakeStore) ForgetEpoch() uint64                     { return 0 }
func (f fakeStore) LastQueuedPrompt(_ context.Context, sessionID string) (store.PendingEvent, bool, error) {
	if f.prompt == nil {
		return store.PendingEvent{}, false, nil
	}
	return f.prompt(sessionID)
}
func (fakeStore) ClaimSession(context.Context, int) (store.Claim, error) {
	return store.Claim{}, nil
}
func (fakeStore) Release(context.Context, []int64) error { return nil }
func (fakeStore) Unclaim(string)                         {}
func (fakeStore) Commit(context.Context, *store.Batch) (store.CommitResult, error) {
	return store.CommitResult{}, errors.New("not in this test")
}

func newPipeline(tb testing.TB, st Store) *Pipeline {
	tb.Helper()
	p, err := New(Config{Store: st, Compressor: offline.New(), Policy: memory.Policy{
		ExcludedProjects: []string{"secret-*"}, SkipTools: []string{"TodoWrite"}}})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// pending turns events into claimed queue rows, as Ingest stores them.
func pending(tb testing.TB, evs ...apitype.Event) []store.PendingEvent {
	tb.Helper()
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	out := make([]store.PendingEvent, len(evs))
	for i, ev := range evs {
		ev.EventID = fmt.Sprintf("e%d", i)
		ev.At = at.Add(time.Duration(i) * time.Second)
		if ev.Project == "" {
			ev.Project = "p"
		}
		if ev.SessionID == "" {
			ev.SessionID = "s"
		}
		b, err := json.Marshal(newQueueRow(ev))
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = store.PendingEvent{ID: int64(i + 1), EventID: ev.EventID, Kind: ev.Kind, SessionID: ev.SessionID, Project: ev.Project, Payload: b}
	}
	return out
}

func bash(cmd, out string) apitype.Event {
	return apitype.Event{Kind: memory.KindObservation, ToolName: "Bash",
		ToolInput: json.RawMessage(fmt.Sprintf(`{"command":%q}`, cmd)), ToolResponse: json.RawMessage(fmt.Sprintf(`{"stdout":%q}`, out))}
}

func TestBuild(t *testing.T) {
	ghToken := "ghp_" + strings.Repeat("a1B2", 9)
	known := fakeSessions{state: func(id string) (store.SessionState, bool, error) {
		return store.SessionState{SessionID: id, PromptCount: 2, FirstPrompt: "fix the parser"}, true, nil
	}}
	for _, tc := range []struct {
		name  string
		store Sessions
		evs   []apitype.Event
		check func(t *testing.T, b *store.Batch)
	}{
		{"a call the compressor drops leaves every other call its own tool", fakeSessions{}, []apitype.Event{
			{Kind: memory.KindPrompt, Prompt: "fix the greeting"},
			{Kind: memory.KindObservation, ToolName: "Read", ToolInput: json.RawMessage(`{"file_path":"/w/app.py"}`),
				ToolResponse: json.RawMessage(`{"file":{"content":"print('helo')"}}`)},
			{Kind: memory.KindObservation, ToolName: "TodoWrite", ToolInput: json.RawMessage(`{"todos":[]}`)},
			bash("python3 app.py", "hello"),
		}, func(t *testing.T, b *store.Batch) {
			// Two observations from three calls: each must keep its own call's tool and time,
			// not the last call's (the Read was stored as Bash, quoted as command output).
			var got []string
			for _, o := range b.Observations {
				got = append(got, fmt.Sprintf("%s@%d", o.ToolName, o.CreatedAt))
			}
			at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
			if want := []string{fmt.Sprintf("Read@%d", at+1000), fmt.Sprintf("Bash@%d", at+3000)}; !slices.Equal(got, want) {
				t.Errorf("observations %v, want %v", got, want)
			}
		}},
		{"a turn: session, prompt, observation", fakeSessions{}, []apitype.Event{
			{Kind: memory.KindPrompt, Prompt: "run the tests"},
			bash("go test ./parser/...", "ok  parser 0.1s"),
		}, func(t *testing.T, b *store.Batch) {
			if len(b.Sessions) != 1 || b.Sessions[0].Status != "active" || len(b.Prompts) != 1 || b.Prompts[0].PromptNumber != 1 {
				t.Errorf("sessions %+v prompts %+v", b.Sessions, b.Prompts)
			}
			if len(b.Observations) != 1 || b.Observations[0].ToolName != "Bash" || b.Observations[0].PromptNumber != 1 {
				t.Errorf("observations %+v", b.Observations)
			}
			if st := b.States[0]; st.PromptCount != 1 || st.FirstPrompt != "run the tests" {
				t.Errorf("state %+v", st)
			}
		}},
		{"a known session continues its prompt count", known, []apitype.Event{
			{Kind: memory.KindPrompt, Prompt: "and now the lexer"},
		}, func(t *testing.T, b *store.Batch) {
			if len(b.Sessions) != 0 || len(b.Prompts) != 1 || b.Prompts[0].PromptNumber != 3 {
				t.Errorf("sessions %+v prompts %+v", b.Sessions, b.Prompts)
			}
		}},
		{"a private turn records none of its tool calls", fakeSessions{}, []apitype.Event{
			{Kind: memory.KindPrompt, Private: true},
			bash("cat hidden-notes.txt", "hidden"),
			{Kind: memory.KindSummarize, LastAssistantMessage: "the hidden notes say …"},
			{Kind: memory.KindPrompt, Prompt: "now the tests"},
			bash("go test ./...", "ok"),
		}, func(t *testing.T, b *store.Batch) {
			if len(b.Observations) != 1 || strings.Contains(b.Observations[0].Title+b.Observations[0].Narrative, "hidden") {
				t.Errorf("observations %+v", b.Observations)
			}
			if len(b.Summaries) != 0 {
				t.Errorf("a wholly private turn was summarised: %+v", b.Summaries)
			}
			if len(b.Done) != 5 {
				t.Errorf("done = %v, want all 5 events", b.Done)
			}
		}},
		{"a lone SessionEnd makes no session", fakeSessions{}, []apitype.Event{
			{Kind: memory.KindSessionEnd, Reason: "other"},
		}, func(t *testing.T, b *store.Batch) {
			if len(b.Sessions) != 0 || len(b.Done) != 1 || len(b.DoneEvents) != 1 {
				t.Errorf("sessions %+v done %v", b.Sessions, b.Done)
			}
		}},
		{"a summary sees the session's earlier observations", fakeSessions{
			state: known.state,
			obs: func(string) ([]memory.Observation, error) {
				return []memory.Observation{{Type: "bugfix", Title: "Fixed the off-by-one in the parser", FilesModified: []string{"parser.go"}}}, nil
			},
		}, []apitype.Event{
			{Kind: memory.KindSummarize, LastAssistantMessage: "Done: the parser handles empty input."},
			{Kind: memory.KindSessionEnd},
		}, func(t *testing.T, b *store.Batch) {
			if len(b.Summaries) != 1 || b.Summaries[0].Request != "fix the parser" {
				t.Fatalf("summaries %+v", b.Summaries)
			}
			if len(b.Sessions) != 1 || b.Sessions[0].Status != "ended" {
				t.Errorf("sessions %+v", b.Sessions)
			}
		}},
		{"the privacy gate keeps a passing test run's command in its title", fakeSessions{}, []apitype.Event{
			bash("go test ./pkg/fixture/... -run Test1", "ok  example.com/fixture 0.1s"),
		}, func(t *testing.T, b *store.Batch) {
			// "Tests pass: go test …" once read as the key "pass" and a secret value.
			if len(b.Observations) != 1 || !strings.Contains(b.Observations[0].Title, "go test ./pkg/fixture/... -run Test1") {
				t.Errorf("observations %+v", b.Observations)
			}
		}},
		{"records pass the privacy gate again", fakeSessions{}, []apitype.Event{
			bash("git push https://x:"+ghToken+"@github.com/o/r", "done"),
		}, func(t *testing.T, b *store.Batch) {
			raw, _ := json.Marshal(b)
			if strings.Contains(string(raw), ghToken) {
				t.Errorf("the token reached the batch: %s", raw)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := newPipeline(t, fakeStore{}).Build(context.Background(), tc.store, pending(t, tc.evs...))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, b)
		})
	}
}

func TestBuildFailsWhenTheStoreDoes(t *testing.T) {
	broken := fakeSessions{state: func(string) (store.SessionState, bool, error) {
		return store.SessionState{}, false, errors.New("disk I/O error")
	}}
	if _, err := newPipeline(t, fakeStore{}).Build(context.Background(), broken, pending(t, bash("ls", "a"))); err == nil {
		t.Fatal("Build succeeded on a store that fails")
	}
}

func TestIngest(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var queued []store.PendingEvent
	full := false
	st := fakeStore{enqueue: func(ev store.PendingEvent) (bool, error) {
		if full {
			return false, fmt.Errorf("enqueue: %w", memory.ErrStorageFull)
		}
		queued = append(queued, ev)
		return false, nil
	}}
	p := newPipeline(t, st)
	p.cfg.Now = func() time.Time { return now }
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		ev         apitype.Event
		wantStatus string
		wantErr    error
	}{
		{"queued", apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "p", Prompt: "hi"}, "queued", nil},
		{"unknown kind", apitype.Event{Kind: "nap", SessionID: "s", Project: "p"}, "", memory.ErrInvalid},
		{"no project", apitype.Event{Kind: memory.KindPrompt, SessionID: "s"}, "", memory.ErrInvalid},
		{"session id that is all private", apitype.Event{Kind: memory.KindPrompt, SessionID: "<private>x</private>", Project: "p"}, "", memory.ErrInvalid},
		{"excluded project", apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "secret-plans"}, "skipped", nil},
		{"skipped tool", apitype.Event{Kind: memory.KindObservation, SessionID: "s", Project: "p", ToolName: "todowrite"}, "skipped", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := p.Ingest(ctx, tc.ev)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr != nil) != (err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if rep.Status != tc.wantStatus {
				t.Errorf("status = %q, want %q", rep.Status, tc.wantStatus)
			}
		})
	}
	if len(queued) != 1 || queued[0].EventID == "" {
		t.Fatalf("queued %+v, want the one valid event with a minted event ID", queued)
	}

	// A time far ahead is clamped to now + MaxFutureAt.
	queued = nil
	if _, err := p.Ingest(ctx, apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "p", At: now.AddDate(100, 0, 0)}); err != nil {
		t.Fatal(err)
	}
	if got, want := queued[0].CreatedAt, now.Add(memory.MaxFutureAt).UnixMilli(); got != want {
		t.Errorf("created_at = %d, want %d", got, want)
	}

	// A full disk is reported until an event fits again.
	full = true
	if _, err := p.Ingest(ctx, apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "p"}); !errors.Is(err, memory.ErrStorageFull) {
		t.Fatalf("err = %v, want ErrStorageFull", err)
	}
	if !p.Stats().StorageFull {
		t.Error("stats do not say the disk is full")
	}
	full = false
	if _, err := p.Ingest(ctx, apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "p"}); err != nil {
		t.Fatal(err)
	}
	if s := p.Stats(); s.StorageFull || s.Ingested != 3 {
		t.Errorf("stats %+v, want not full and 3 ingested", s)
	}
}

// The workers drain a real queue into real records, and Close waits for them.
func TestWorkersProcessTheQueue(t *testing.T) {
	testkit.LeakCheck(t)
	rep := testkit.OpenReplica(t, "origin-a")
	p, err := New(Config{Store: rep, Compressor: offline.New(), Workers: 2, Linger: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const n = 50
	for i := range n {
		ev := bash(fmt.Sprintf("go test ./pkg%d/...", i), "ok")
		ev.SessionID, ev.Project = fmt.Sprintf("s%d", i%4), "p"
		if _, err := p.Ingest(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	p.Start()
	testkit.WaitFor(t, "the queue to drain", 20*time.Second, func() bool {
		c, err := rep.Counts(ctx)
		return err == nil && c.Pending == 0 && c.Observations == n
	})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	if s := p.Stats(); s.Processed != n || s.Observations != n || s.Failures != 0 {
		t.Errorf("stats %+v", s)
	}
}

// A store error that Broken calls final stops the pipeline: the workers stop claiming and
// Ingest refuses events with memory.ErrCorrupt (nothing acknowledged it cannot keep).
func TestBrokenStoreStopsThePipeline(t *testing.T) {
	testkit.LeakCheck(t)
	errDamaged := errors.New("database disk image is malformed")
	claims := 0
	st := &brokenStore{fakeStore: fakeStore{enqueue: func(store.PendingEvent) (bool, error) { return false, nil }},
		claim: func() (store.Claim, error) { claims++; return store.Claim{}, errDamaged }}
	p, err := New(Config{Store: st, Compressor: offline.New(), Broken: func(err error) bool { return errors.Is(err, errDamaged) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.Ingest(ctx, apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "p"}); err != nil {
		t.Fatalf("ingest before the damage is seen: %v", err)
	}
	p.Start()
	testkit.WaitFor(t, "the pipeline to see the damage", 10*time.Second, func() bool { return p.Broken() != nil })
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if claims != 1 {
		t.Errorf("claims = %d, want 1: a broken store is not asked again", claims)
	}
	_, err = p.Ingest(ctx, apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "p"})
	if !errors.Is(err, memory.ErrCorrupt) || !errors.Is(err, errDamaged) {
		t.Fatalf("ingest on a broken store: %v, want ErrCorrupt wrapping the cause", err)
	}
}

type brokenStore struct {
	fakeStore
	claim func() (store.Claim, error)
}

func (b *brokenStore) ClaimSession(context.Context, int) (store.Claim, error) { return b.claim() }

// TestIngestPrivateTurn: the hook's rule for a wholly private turn holds for every client.
// Its prompt is queued as a marker; its tool calls are never queued and its answer is
// withheld (the summarize event is queued without it, so the session's earlier turns are
// still summarised), whether the prompt still waits in the queue or is already the
// session's state.
func TestIngestPrivateTurn(t *testing.T) {
	ctx := context.Background()
	marshal := func(ev apitype.Event) []byte {
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	queuedPrompt := func(private bool) func(string) (store.PendingEvent, bool, error) {
		return func(sid string) (store.PendingEvent, bool, error) {
			return store.PendingEvent{Kind: memory.KindPrompt, SessionID: sid,
				Payload: marshal(apitype.Event{Kind: memory.KindPrompt, SessionID: sid, Private: private})}, true, nil
		}
	}
	statePrivate := func(id string) (store.SessionState, bool, error) {
		return store.SessionState{SessionID: id, PromptCount: 1, TurnPrivate: true}, true, nil
	}
	answer := apitype.Event{Kind: memory.KindSummarize, SessionID: "s", Project: "p", LastAssistantMessage: "your plan is X"}
	call := apitype.Event{Kind: memory.KindObservation, SessionID: "s", Project: "p", ToolName: "Bash"}
	for _, tc := range []struct {
		name   string
		prompt func(string) (store.PendingEvent, bool, error)
		state  func(string) (store.SessionState, bool, error)
		ev     apitype.Event
		want   string
	}{
		{"answer after a queued private prompt", queuedPrompt(true), nil, answer, "withheld"},
		{"tool call after a queued private prompt", queuedPrompt(true), nil, call, "skipped"},
		{"answer of a private turn already processed", nil, statePrivate, answer, "withheld"},
		{"a newer public prompt waits", queuedPrompt(false), statePrivate, answer, "queued"},
		{"a public turn", nil, nil, answer, "queued"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var queued []store.PendingEvent
			st := fakeStore{fakeSessions: fakeSessions{state: tc.state}, prompt: tc.prompt,
				enqueue: func(ev store.PendingEvent) (bool, error) { queued = append(queued, ev); return false, nil }}
			rep, err := newPipeline(t, st).Ingest(ctx, tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "withheld" {
				// Queued, but without the answer and marked so.
				if rep.Status != "queued" || len(queued) != 1 {
					t.Fatalf("status %q with %d queued, want the summarize event queued", rep.Status, len(queued))
				}
				var got apitype.Event
				if err := json.Unmarshal(queued[0].Payload, &got); err != nil {
					t.Fatal(err)
				}
				if got.LastAssistantMessage != "" || !got.Private || strings.Contains(string(queued[0].Payload), "your plan") {
					t.Fatalf("queued summarize event %s still holds the private turn's answer", queued[0].Payload)
				}
				return
			}
			if rep.Status != tc.want || (tc.want == "skipped") != (len(queued) == 0) {
				t.Fatalf("status %q with %d queued, want %q", rep.Status, len(queued), tc.want)
			}
		})
	}
	t.Run("a wholly private prompt is queued as a marker", func(t *testing.T) {
		var queued []store.PendingEvent
		st := fakeStore{enqueue: func(ev store.PendingEvent) (bool, error) { queued = append(queued, ev); return false, nil }}
		if _, err := newPipeline(t, st).Ingest(ctx, apitype.Event{Kind: memory.KindPrompt, SessionID: "s", Project: "p",
			Prompt: "<private>the plan</private>"}); err != nil {
			t.Fatal(err)
		}
		var got apitype.Event
		if len(queued) != 1 || json.Unmarshal(queued[0].Payload, &got) != nil || !got.Private || got.Prompt != "" {
			t.Fatalf("queued %+v, want one prompt event marked private with no text", queued)
		}
	})
}

// forgetBeforeCommit is the real replica with a forget run between a worker's claim (and
// Build) and its commit: the first commit that carries observations first forgets the
// prompt of their turn, as a user's `memnode forget` arriving while the compressor runs.
type forgetBeforeCommit struct {
	*replica.Replica
	mu      sync.Mutex
	prompts []string // IDs of the prompts committed so far
	forget  bool     // armed: the next commit with observations forgets the last prompt first
	forgot  int      // records the forget found
	settled bool     // a commit returned after the forget
}

func (f *forgetBeforeCommit) Commit(ctx context.Context, b *store.Batch) (store.CommitResult, error) {
	f.mu.Lock()
	if f.forget && len(b.Observations) > 0 {
		f.forget = false
		n, err := f.Replica.Forget(ctx, []string{f.prompts[len(f.prompts)-1]})
		if err != nil {
			f.mu.Unlock()
			return store.CommitResult{}, err
		}
		f.forgot = n
	}
	f.mu.Unlock()
	res, err := f.Replica.Commit(ctx, b)
	f.mu.Lock()
	f.settled = f.settled || (!f.forget && f.forgot > 0)
	for _, p := range res.Prompts {
		f.prompts = append(f.prompts, p.ID)
	}
	f.mu.Unlock()
	return res, err
}

func (f *forgetBeforeCommit) promptsStored() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.prompts)
}

// TestForgetBetweenClaimAndCommit: a worker built records of a turn from the session's
// state, then the turn's prompt was forgotten before its commit. The commit sees the
// session changed (store.ErrStaleClaim) and the worker builds the batch again from the
// state the forget left: the turn's tool calls are dropped like a private turn's, and the
// next turn is recorded as usual.
func TestForgetBetweenClaimAndCommit(t *testing.T) {
	testkit.LeakCheck(t)
	rep := testkit.OpenReplica(t, "origin-a")
	st := &forgetBeforeCommit{Replica: rep}
	p, err := New(Config{Store: st, Compressor: offline.New(), Workers: 1, Linger: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	defer p.Close()
	ctx := context.Background()
	ingest := func(ev apitype.Event) {
		t.Helper()
		ev.SessionID, ev.Project = "s", "p"
		if _, err := p.Ingest(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	drained := func() bool {
		c, err := rep.Counts(ctx)
		return err == nil && c.Pending == 0
	}

	ingest(apitype.Event{Kind: memory.KindPrompt, Prompt: "rotate the staging keys"})
	testkit.WaitFor(t, "the first prompt stored", 10*time.Second, func() bool { return st.promptsStored() == 1 })
	st.mu.Lock()
	st.forget = true
	st.mu.Unlock()
	ingest(bash("vault rotate staging-secret-marker", "rotated"))
	testkit.WaitFor(t, "the forgotten turn's tool call processed", 10*time.Second, func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		return st.settled && drained()
	})
	if st.forgot != 1 {
		t.Fatalf("the forget found %d records, want the prompt", st.forgot)
	}
	if c, _ := rep.Counts(ctx); c.Observations != 0 || c.Prompts != 0 {
		t.Fatalf("after the forget: %d observations, %d prompts stored; want none of the forgotten turn", c.Observations, c.Prompts)
	}
	state, _, err := rep.SessionState(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if !state.TurnPrivate || state.FirstPrompt != "" || state.LastPrompt != "" {
		t.Fatalf("session state %+v: the commit undid the forget (want the turn private, no prompt text)", state)
	}

	ingest(apitype.Event{Kind: memory.KindPrompt, Prompt: "now update the docs"})
	ingest(bash("make docs", "ok"))
	testkit.WaitFor(t, "the next turn recorded", 10*time.Second, func() bool {
		c, err := rep.Counts(ctx)
		return err == nil && c.Pending == 0 && c.Observations == 1
	})
	obs, err := rep.SessionObservations(ctx, "s", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		if strings.Contains(o.Title+o.Subtitle+o.Narrative+strings.Join(o.Facts, " "), "staging-secret-marker") {
			t.Fatalf("an observation of the forgotten turn was stored: %+v", o)
		}
	}
	if s := p.Stats(); s.Failures != 0 {
		t.Errorf("stats %+v: a stale claim is rebuilt, not counted as a failure", s)
	}
}

// countingGate counts the private-turn gate's queue lookups.
type countingGate struct {
	*forgetBeforeCommit
	lookups atomic.Int64
}

func (c *countingGate) LastQueuedPrompt(ctx context.Context, sessionID string) (store.PendingEvent, bool, error) {
	c.lookups.Add(1)
	return c.forgetBeforeCommit.LastQueuedPrompt(ctx, sessionID)
}

// TestPrivateTurnCacheIsInvalidatedByForget: the gate reads a session's turn from the
// store once and then answers from its cache, also after the worker committed the prompt;
// forgetting the prompt of the current turn makes the turn private, and the very next tool
// call is refused, not answered from the stale cache.
func TestPrivateTurnCacheIsInvalidatedByForget(t *testing.T) {
	testkit.LeakCheck(t)
	rep := testkit.OpenReplica(t, "origin-a")
	st := &countingGate{forgetBeforeCommit: &forgetBeforeCommit{Replica: rep}}
	p, err := New(Config{Store: st, Compressor: offline.New(), Workers: 1, Linger: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	defer p.Close()
	ctx := context.Background()
	ingest := func(ev apitype.Event) string {
		t.Helper()
		ev.SessionID, ev.Project = "s", "p"
		rep, err := p.Ingest(ctx, ev)
		if err != nil {
			t.Fatal(err)
		}
		return rep.Status
	}
	ingest(apitype.Event{Kind: memory.KindPrompt, Prompt: "rotate the staging keys"})
	testkit.WaitFor(t, "the prompt stored", 10*time.Second, func() bool { return st.promptsStored() == 1 })
	for i := range 3 {
		if got := ingest(bash(fmt.Sprintf("vault status %d", i), "sealed")); got != "queued" {
			t.Fatalf("tool call %d of a public turn: %q, want queued", i, got)
		}
	}
	if n := st.lookups.Load(); n != 0 {
		t.Fatalf("%d queue lookups: the prompt Ingest queued should have answered the gate", n)
	}
	st.mu.Lock()
	promptID := st.prompts[0]
	st.mu.Unlock()
	if _, err := rep.Forget(ctx, []string{promptID}); err != nil {
		t.Fatal(err)
	}
	if got := ingest(bash("vault rotate", "rotated")); got != "skipped" {
		t.Fatalf("tool call after its turn's prompt was forgotten: %q, want skipped (the cache outlived the forget)", got)
	}
	if n := st.lookups.Load(); n != 1 {
		t.Fatalf("%d queue lookups after the forget, want 1 (the cache read again once)", n)
	}
	if got := ingest(bash("vault audit", "ok")); got != "skipped" {
		t.Fatalf("second tool call of the forgotten turn: %q, want skipped", got)
	}
	if got := ingest(apitype.Event{Kind: memory.KindPrompt, Prompt: "now the docs"}); got != "queued" {
		t.Fatalf("next prompt: %q", got)
	}
	if got := ingest(bash("make docs", "ok")); got != "queued" {
		t.Fatalf("tool call of the next turn: %q, want queued", got)
	}
}

// claude-mem's platformSource for Claude Code is "claude": an event that names it is
// recorded as claude-code, the name every filter and index line uses.
func TestIngestReadsClaudeMemPlatformName(t *testing.T) {
	testkit.LeakCheck(t)
	rep := testkit.OpenReplica(t, "origin-a")
	p, err := New(Config{Store: rep, Compressor: offline.New(), Workers: 1, Linger: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ev := bash("go test ./...", "ok")
	ev.SessionID, ev.Project, ev.Platform = "s-claude", "p", "claude"
	if _, err := p.Ingest(ctx, ev); err != nil {
		t.Fatal(err)
	}
	p.Start()
	testkit.WaitFor(t, "the event to be recorded", 20*time.Second, func() bool {
		c, err := rep.Counts(ctx)
		return err == nil && c.Pending == 0 && c.Observations == 1
	})
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := rep.SessionPlatforms(ctx, []string{"s-claude"})
	if err != nil || got["s-claude"] != "claude-code" {
		t.Fatalf("session platform %q (%v), want claude-code", got["s-claude"], err)
	}
}

// Antigravity records a call at PreToolUse and hears of its failure at PostToolUse, which
// names only the step: the failure is recorded with the command that failed, in a later
// batch than the call's.
func TestFailedStepKeepsItsCommand(t *testing.T) {
	testkit.LeakCheck(t)
	rep := testkit.OpenReplica(t, "origin-a")
	p, err := New(Config{Store: rep, Compressor: offline.New(), Workers: 1, Linger: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	defer p.Close()
	ctx := context.Background()
	send := func(ev apitype.Event, want int) {
		t.Helper()
		ev.SessionID, ev.Project = "s-agy", "p"
		if _, err := p.Ingest(ctx, ev); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "the event to be recorded", 20*time.Second, func() bool {
			c, err := rep.Counts(ctx)
			return err == nil && c.Pending == 0 && c.Observations == want
		})
	}
	send(apitype.Event{Kind: memory.KindObservation, ToolName: "Bash", ToolUseID: "conv:6",
		ToolInput: json.RawMessage(`{"command":"python -m pytest -q"}`)}, 1)
	send(apitype.Event{Kind: memory.KindObservation, ToolName: apitype.ToolFailedStep, ToolUseID: "conv:6",
		ToolInput: json.RawMessage(`{"step":6}`), ToolResponse: json.RawMessage(`{"error":"exit status 1"}`)}, 2)
	// A failure of a call the node never saw stays as it came.
	send(apitype.Event{Kind: memory.KindObservation, ToolName: apitype.ToolFailedStep, ToolUseID: "conv:9",
		ToolInput: json.RawMessage(`{"step":9}`), ToolResponse: json.RawMessage(`{"error":"exit status 2"}`)}, 3)
	obs, err := rep.SessionObservations(ctx, "s-agy", 10)
	if err != nil || len(obs) != 3 {
		t.Fatalf("%d observations, %v", len(obs), err)
	}
	if obs[0].Title != "Test result unknown: python -m pytest -q" {
		t.Errorf("the call before it ran: %q", obs[0].Title)
	}
	if obs[1].Title != "Tests fail: python -m pytest -q" || obs[1].ToolName != "Bash" || !slices.Contains(obs[1].Facts, "exit 1") {
		t.Errorf("the failure is recorded as %q (%s, facts %q), want the failed pytest run", obs[1].Title, obs[1].ToolName, obs[1].Facts)
	}
	if obs[2].Title != "Failed: "+apitype.ToolFailedStep {
		t.Errorf("an unpaired failure: %q", obs[2].Title)
	}
}

// A model's observation that covers several calls names no single one: it keeps the calls'
// tool only when they share it.
func TestSourceCallOfAMergedObservation(t *testing.T) {
	rows := func(tools ...string) []queueRow {
		var out []queueRow
		for i, tool := range tools {
			out = append(out, queueRow{EventID: fmt.Sprint(i), ToolName: tool})
		}
		return out
	}
	for _, tc := range []struct {
		o       ai.Observation
		perCall bool
		calls   []queueRow
		want    string
	}{
		{ai.Observation{Call: 1}, false, rows("Read", "Bash"), "0/Read"},
		{ai.Observation{}, true, rows("Read", "Bash"), "0/Read"},
		{ai.Observation{}, false, rows("Bash", "Bash", "Bash"), "2/Bash"},
		{ai.Observation{}, false, rows("Read", "save_memory"), "1/"},
		{ai.Observation{Call: 7}, false, rows("Read", "Edit"), "1/"}, // out of range: not believed
	} {
		ev := sourceCall(tc.o, 0, tc.perCall, tc.calls)
		if got := ev.EventID + "/" + ev.ToolName; got != tc.want {
			t.Errorf("sourceCall(%+v, perCall %v, %d calls) = %s, want %s", tc.o, tc.perCall, len(tc.calls), got, tc.want)
		}
	}
}

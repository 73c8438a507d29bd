package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/ai/offline"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/pipeline"
	"github.com/memnode/memnode/store"
)

// TestHooksNeverWaitForAForget: while a forget holds the writer connection (held open
// inside its transaction), a PostToolUse event of a session the pipeline has not seen — so
// its private-turn gate reads the queue and the session's state — is accepted, queued and
// acknowledged, and so is a prompt; the forget is still running when they return. Before
// SessionState moved to the read pool, the gate's read waited for the writer (4.2–5.8 s
// for one hook behind a forget at 1M observations, issue 29).
func TestHooksNeverWaitForAForget(t *testing.T) {
	ctx := context.Background()
	r, err := Open(ctx, Config{Path: filepath.Join(t.TempDir(), "memnode.db"), Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.Commit(ctx, &store.Batch{
		Sessions:     []memory.Session{{ID: "busy", Project: "p", StartedAt: 1}, {ID: "gone", Project: "p", StartedAt: 1}},
		Prompts:      []memory.Prompt{{SessionID: "busy", Project: "p", PromptNumber: 1, Text: "fix the parser", CreatedAt: 2}},
		Observations: []memory.Observation{{SessionID: "gone", Project: "p", Type: "change", Title: "to forget", CreatedAt: 3}},
	})
	if err != nil || len(res.Observations) != 1 {
		t.Fatalf("commit: %+v %v", res, err)
	}
	p, err := pipeline.New(pipeline.Config{Store: r, Compressor: offline.New()})
	if err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var released bool
	let := func() {
		if !released {
			released = true
			close(release)
		}
	}
	defer let() // before Close, which waits for the writer
	r.inForget = func(int) error {
		close(held)
		<-release
		return nil
	}
	forgot := make(chan error, 1)
	go func() {
		_, err := r.Forget(ctx, []string{"gone"})
		forgot <- err
	}()
	<-held
	// A deadline, not a timing: a hook that waited for the writer would wait for ever.
	hctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tool, _ := json.Marshal(map[string]string{"command": "go test ./..."})
	for _, ev := range []apitype.Event{
		{Kind: memory.KindObservation, SessionID: "busy", Project: "p", ToolName: "Bash", ToolInput: tool, ToolResponse: json.RawMessage(`"ok"`)},
		{Kind: memory.KindPrompt, SessionID: "busy", Project: "p", Prompt: "and the lexer"},
	} {
		rep, err := p.Ingest(hctx, ev)
		if err != nil || rep.Status != "queued" {
			t.Fatalf("%s during a forget: %+v %v", ev.Kind, rep, err)
		}
	}
	select {
	case err := <-forgot:
		t.Fatalf("test premise: the forget ended (%v) before the hooks were answered", err)
	default:
	}
	if n, _ := r.QueueDepth(ctx); n != 2 {
		t.Errorf("queue depth %d during the forget, want the 2 acknowledged events", n)
	}
	let()
	if err := <-forgot; err != nil {
		t.Fatal(err)
	}
	if n, _ := r.QueueDepth(ctx); n != 2 {
		t.Errorf("queue depth %d after the forget, want the 2 events of the session not forgotten", n)
	}
}

// TestForgetRunsInBoundedTransactions: forgetting many sessions (a project) commits once a
// transaction has deleted its bound of records, so the writer is never held for the whole
// project; each ID is forgotten whole in one transaction, so a transaction that fails (as
// at a crash) leaves every ID either forgotten or untouched, and forgetting again finishes.
func TestForgetRunsInBoundedTransactions(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	const sessions, perSession, limit = 9, 100, 250
	var ids []string
	for s := range sessions {
		sid := fmt.Sprint("s", s)
		ids = append(ids, sid)
		b := &store.Batch{Sessions: []memory.Session{{ID: sid, Project: "p", StartedAt: 1}},
			Prompts: []memory.Prompt{{SessionID: sid, Project: "p", PromptNumber: 1, Text: "do " + sid, CreatedAt: 1}}}
		for i := range perSession {
			b.Observations = append(b.Observations, memory.Observation{SessionID: sid, Project: "p", Type: "change",
				Title: fmt.Sprint(sid, " obs ", i), PromptNumber: 1, CreatedAt: int64(2 + i)})
		}
		if _, err := r.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	r.forgetTxRecords = limit
	count := func(q string) int {
		var n int
		if err := r.r.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The second transaction fails: the first one's sessions are gone, the rest untouched.
	txs := 0
	r.inForget = func(int) error {
		if txs++; txs == 2 {
			return errors.New("simulated crash")
		}
		return nil
	}
	if _, err := r.Forget(ctx, ids); err == nil {
		t.Fatal("the failed transaction must fail the forget")
	}
	gone, kept := count("SELECT COUNT(*) FROM tombstones"), count("SELECT COUNT(DISTINCT session_id) FROM observations")
	if gone == 0 || gone+kept != sessions || count("SELECT COUNT(*) FROM observations") != kept*perSession {
		t.Fatalf("after a failed transaction: %d sessions tombstoned, %d kept with %d observations; want each whole or untouched",
			gone, kept, count("SELECT COUNT(*) FROM observations"))
	}
	var per []int
	r.inForget = func(records int) error {
		per = append(per, records)
		return nil
	}
	found, err := r.Forget(ctx, ids)
	if err != nil || found != kept {
		t.Fatalf("forget again: found %d, %v; want the %d sessions left", found, err, kept)
	}
	if len(per) < 2 {
		t.Errorf("transactions deleted %v records: want more than one transaction for %d", per, kept*(perSession+1))
	}
	for _, n := range per {
		if n > limit+perSession+1 { // a transaction closes once past the bound, at an ID's end
			t.Errorf("a transaction deleted %d records, bound %d (+ one session)", n, limit)
		}
	}
	if n := count("SELECT COUNT(*) FROM observations") + count("SELECT COUNT(*) FROM prompts"); n != 0 || count("SELECT COUNT(*) FROM tombstones") != sessions {
		t.Fatalf("%d records left, %d tombstones", n, count("SELECT COUNT(*) FROM tombstones"))
	}
}

// TestForgetDoesNotWaitBehindALongRead: while an export holds a snapshot of the database (its
// visitor is held mid-walk), a forget answers without waiting for readers — its checkpoint
// waits 10 minutes for them in this test, so one that waited would not answer — and once
// the export ends, the background retry takes the forgotten text out of the WAL. At 1M
// observations the full integrity check after every start is such a read, and each forget
// behind it waited its 50 ms for nothing (make bench-scale, issue 29).
func TestForgetDoesNotWaitBehindALongRead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const secret = "zanzibar-ledger-forgotten"
	res, err := r.Commit(ctx, &store.Batch{
		Sessions: []memory.Session{{ID: "s", Project: "p", StartedAt: 1}},
		Observations: []memory.Observation{{SessionID: "s", Project: "p", Type: "change", Title: "kept", CreatedAt: 2},
			{SessionID: "s", Project: "p", Type: "change", Title: "t", Narrative: strings.Repeat(secret+" ", 1000), CreatedAt: 3}},
	})
	if err != nil || len(res.Observations) != 2 {
		t.Fatalf("commit: %+v %v", res, err)
	}
	r.forgetWait = 10 * time.Minute
	walking, release := make(chan struct{}), make(chan struct{})
	walked := make(chan error, 1)
	go func() {
		first := true
		walked <- r.Walk(ctx, "", store.Visitor{Observation: func(memory.Observation) error {
			if first {
				first = false
				close(walking)
				<-release
			}
			return nil
		}})
	}()
	<-walking
	forgot := make(chan error, 1)
	go func() {
		_, err := r.Forget(ctx, []string{res.Observations[1].ID})
		forgot <- err
	}()
	// A deadline, not a timing: a forget that waited for the reader would wait 10 minutes.
	select {
	case err := <-forgot:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		close(release)
		t.Fatal("the forget waited for the export's read")
	}
	if !walHolds(path, secret) {
		t.Fatal("the WAL lost the text while the export read: the test no longer sets up what it checks")
	}
	close(release)
	if err := <-walked; err != nil {
		t.Fatal(err)
	}
	waitWALWithout(t, path, secret)
}

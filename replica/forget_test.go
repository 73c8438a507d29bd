package replica

import (
	"bytes"
	"context"
	"github.com/memnode/memnode/store"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/memory"
)

// TestForgetLeavesNothingInTheQueue: the raw hook event behind a forgotten record is in
// neither the queue database nor its WAL once forget returns, also when it was processed
// before the forget; an event still waiting for a forgotten session is dropped.
func TestForgetLeavesNothingInTheQueue(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Make the queue database look like one written before secure_delete was on: deleted
	// rows leave their bytes in free space.
	if _, err := r.q.ExecContext(ctx, "PRAGMA secure_delete = OFF"); err != nil {
		t.Fatal(err)
	}
	secret := "numbat-queue-secret"
	payload := []byte(`{"prompt":"` + strings.Repeat(secret+" ", 800) + `"}`) // overflow pages
	if _, err := r.Enqueue(ctx, store.PendingEvent{EventID: "e1", Kind: memory.KindPrompt, SessionID: "s1", Project: "p", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	c, err := r.ClaimSession(ctx, 10)
	if err != nil || len(c.Events) != 1 {
		t.Fatalf("claim: %+v %v", c, err)
	}
	res, err := r.Commit(ctx, &store.Batch{Prompts: []memory.Prompt{{SessionID: "s1", Project: "p", PromptNumber: 1, Text: secret, CreatedAt: 1}},
		Done: []int64{c.Events[0].ID}, DoneEvents: []string{"e1"}})
	if err != nil || len(res.Prompts) != 1 {
		t.Fatalf("commit: %+v %v", res, err)
	}
	r.Unclaim("s1")
	// An event of another session, still waiting when that session is forgotten.
	waiting := "quokka-waiting-secret"
	if _, err := r.Enqueue(ctx, store.PendingEvent{EventID: "e2", Kind: memory.KindPrompt, SessionID: "s2", Project: "p",
		Payload: []byte(`{"prompt":"` + waiting + `"}`)}); err != nil {
		t.Fatal(err)
	}
	queue := QueuePath(path)
	if b, _ := os.ReadFile(queue + "-wal"); !bytes.Contains(b, []byte(secret)) {
		t.Fatal("test premise: the processed event's payload should still be in the queue WAL")
	}
	if _, err := r.Forget(ctx, []string{res.Prompts[0].ID, "s2"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{queue, queue + "-wal", path, path + "-wal"} {
		b, _ := os.ReadFile(p)
		for _, s := range []string{secret, waiting} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s still holds %q", filepath.Base(p), s)
			}
		}
	}
	if n, _ := r.QueueDepth(ctx); n != 0 {
		t.Errorf("queue depth = %d, want the forgotten session's event dropped", n)
	}
}

// TestForgettingAPromptForgetsItsTurn: the observations and the summary of a forgotten
// prompt's turn go with it (they repeat its text); the next turn stays.
func TestForgettingAPromptForgetsItsTurn(t *testing.T) {
	ctx := context.Background()
	r := openTest(t, "dev-a")
	res, err := r.Commit(ctx, &store.Batch{
		Prompts: []memory.Prompt{
			{SessionID: "s1", Project: "p", PromptNumber: 1, Text: "rotate the wallaby key", CreatedAt: 100},
			{SessionID: "s1", Project: "p", PromptNumber: 2, Text: "now the docs", CreatedAt: 200},
		},
		Observations: []memory.Observation{
			{SessionID: "s1", Project: "p", Type: "change", Title: "rotated the wallaby key", PromptNumber: 1, CreatedAt: 110},
			{SessionID: "s1", Project: "p", Type: "change", Title: "wrote docs", PromptNumber: 2, CreatedAt: 210},
		},
		Summaries: []memory.Summary{
			{SessionID: "s1", Project: "p", Request: "rotate the wallaby key", CreatedAt: 150},
			{SessionID: "s1", Project: "p", Request: "now the docs", CreatedAt: 250},
		},
	})
	if err != nil || len(res.Prompts) != 2 || len(res.Observations) != 2 || len(res.Summaries) != 2 {
		t.Fatalf("commit: %+v %v", res, err)
	}
	n, err := r.Forget(ctx, []string{res.Prompts[0].ID})
	if err != nil || n != 1 {
		t.Fatalf("forget = %d, %v; want 1 (the prompt asked for)", n, err)
	}
	dump, err := r.CanonicalDump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump, "wallaby") {
		t.Errorf("the forgotten turn's text survives:\n%s", dump)
	}
	for _, keep := range []string{"now the docs", "wrote docs"} {
		if !strings.Contains(dump, keep) {
			t.Errorf("the next turn lost %q:\n%s", keep, dump)
		}
	}
	// Each derived record has its own tombstone, so every device drops it.
	for _, id := range []string{res.Observations[0].ID, res.Summaries[0].ID} {
		var one int
		if err := r.r.QueryRowContext(ctx, "SELECT 1 FROM tombstones WHERE id = ?", id).Scan(&one); err != nil {
			t.Errorf("%s has no tombstone: %v", id, err)
		}
	}
}

// TestForgetPromptDropsItsQueuedTurn: forgetting the prompt of a session's current turn
// drops that turn's tool calls and answer still waiting in the queue (they would become
// records of the forgotten turn) and leaves their text in no file; the next turn's events,
// queued after its prompt, stay; the session's state marks the rest of the turn private.
func TestForgetPromptDropsItsQueuedTurn(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "memnode.db")
	r, err := Open(ctx, Config{Path: path, Origin: "dev-a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "p", StartedAt: 1, Status: "active"}},
		Prompts: []memory.Prompt{{SessionID: "s1", Project: "p", PromptNumber: 1, Text: "the forgotten ask", CreatedAt: 1}},
		States:  []store.SessionState{{SessionID: "s1", PromptCount: 1, FirstPrompt: "the forgotten ask", LastPrompt: "the forgotten ask"}}})
	if err != nil || len(res.Prompts) != 1 {
		t.Fatalf("commit: %+v %v", res, err)
	}
	secret := "wombat-turn-secret"
	for _, ev := range []store.PendingEvent{
		{EventID: "o1", Kind: memory.KindObservation, Payload: []byte(`{"tool_input":"` + secret + `"}`)},
		{EventID: "a1", Kind: memory.KindSummarize, Payload: []byte(`{"last_assistant_message":"` + secret + `"}`)},
		{EventID: "p2", Kind: memory.KindPrompt, Payload: []byte(`{"prompt":"next ask"}`)},
		{EventID: "o2", Kind: memory.KindObservation, Payload: []byte(`{"tool_input":"next call"}`)},
	} {
		ev.SessionID, ev.Project = "s1", "p"
		if _, err := r.Enqueue(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.Forget(ctx, []string{res.Prompts[0].ID}); err != nil {
		t.Fatal(err)
	}
	c, err := r.ClaimSession(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, ev := range c.Events {
		left = append(left, ev.EventID)
	}
	if strings.Join(left, ",") != "p2,o2" {
		t.Errorf("queued after the forget: %v, want the next turn's p2,o2", left)
	}
	r.Unclaim("s1")
	if st, _, err := r.SessionState(ctx, "s1"); err != nil || !st.TurnPrivate {
		t.Errorf("session state %+v %v: want the forgotten turn private", st, err)
	}
	queue := QueuePath(path)
	for _, p := range []string{queue, queue + "-wal", path, path + "-wal"} {
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s still holds the forgotten turn's text", filepath.Base(p))
		}
	}
}

package replica

import (
	"context"
	"encoding/json"
	"path/filepath"
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
	r.inForget = func() {
		close(held)
		<-release
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

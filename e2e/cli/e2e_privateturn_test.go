package cli

import (
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// TestPrivateTurnThroughAPI: a wholly private turn posted straight to /api/events (its
// prompt all <private>, then a tool call and the Stop event repeating the private text)
// leaves nothing of that turn in any file of the data dir; the next turn is kept.
func TestPrivateTurnThroughAPI(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	const marker = "PRIVTURN-7c1e9a"
	at := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	base := func(kind string) map[string]any {
		return map[string]any{"kind": kind, "platform": "claude-code", "session_id": "s-private-api", "project": "privapi", "at": at()}
	}
	ev := base("prompt")
	ev["prompt"] = "<private>my plan is " + marker + "</private>"
	in.PostEvent(ev)
	ev = base("observation")
	ev["tool_name"] = "Bash"
	ev["tool_input"] = map[string]any{"command": "echo " + marker}
	ev["tool_response"] = map[string]any{"stdout": marker + "\n"}
	in.PostEvent(ev)
	ev = base("summarize")
	ev["last_assistant_message"] = "Understood: your plan is " + marker + "."
	in.PostEvent(ev)
	ev = base("prompt")
	ev["prompt"] = "list the public files"
	in.PostEvent(ev)
	ev = base("summarize")
	ev["last_assistant_message"] = "Listed the public files."
	in.PostEvent(ev)

	db := in.Db()
	testkit.WaitFor(t, "the public turn to be recorded", 30*time.Second, func() bool {
		return in.Count(db, "SELECT COUNT(*) FROM prompts WHERE session_id = 's-private-api'") == 1 && in.Queued() == 0
	})
	if n := in.Count(db, "SELECT COUNT(*) FROM observations WHERE session_id = 's-private-api'"); n != 0 {
		t.Errorf("observations of the session = %d, want 0 (its only tool call was in the private turn)", n)
	}
	db.Close()
	in.MustRun(nil, "stop")
	if hits := testkit.FilesContaining(t, in.DataDir, marker); len(hits) > 0 {
		t.Fatalf("the private turn's text is in %v", hits)
	}
}

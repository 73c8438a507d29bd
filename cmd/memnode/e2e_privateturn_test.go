package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/testkit"
)

// postEvent posts one event to the node's /api/events, as a client other than the hook would.
func (in *instance) postEvent(ev map[string]any) {
	in.tb.Helper()
	body, _ := json.Marshal(ev)
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/api/events", in.port), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+in.token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		in.tb.Fatalf("POST /api/events %v: %s", ev["kind"], resp.Status)
	}
}

// TestPrivateTurnThroughAPI: a wholly private turn posted straight to /api/events (its
// prompt all <private>, then a tool call and the Stop event repeating the private text)
// leaves nothing of that turn in any file of the data dir; the next turn is kept.
func TestPrivateTurnThroughAPI(t *testing.T) {
	in := newInstance(t)
	in.start()
	const marker = "PRIVTURN-7c1e9a"
	at := func() string { return time.Now().UTC().Format(time.RFC3339Nano) }
	base := func(kind string) map[string]any {
		return map[string]any{"kind": kind, "platform": "claude-code", "session_id": "s-private-api", "project": "privapi", "at": at()}
	}
	ev := base("prompt")
	ev["prompt"] = "<private>my plan is " + marker + "</private>"
	in.postEvent(ev)
	ev = base("observation")
	ev["tool_name"] = "Bash"
	ev["tool_input"] = map[string]any{"command": "echo " + marker}
	ev["tool_response"] = map[string]any{"stdout": marker + "\n"}
	in.postEvent(ev)
	ev = base("summarize")
	ev["last_assistant_message"] = "Understood: your plan is " + marker + "."
	in.postEvent(ev)
	ev = base("prompt")
	ev["prompt"] = "list the public files"
	in.postEvent(ev)
	ev = base("summarize")
	ev["last_assistant_message"] = "Listed the public files."
	in.postEvent(ev)

	db := in.db()
	testkit.WaitFor(t, "the public turn to be recorded", 30*time.Second, func() bool {
		return in.count(db, "SELECT COUNT(*) FROM prompts WHERE session_id = 's-private-api'") == 1 && in.queued() == 0
	})
	if n := in.count(db, "SELECT COUNT(*) FROM observations WHERE session_id = 's-private-api'"); n != 0 {
		t.Errorf("observations of the session = %d, want 0 (its only tool call was in the private turn)", n)
	}
	db.Close()
	in.mustRun(nil, "stop")
	if hits := testkit.FilesContaining(t, in.dataDir, marker); len(hits) > 0 {
		t.Fatalf("the private turn's text is in %v", hits)
	}
}

package pipeline

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// TestBuildReadsUnversionedQueueRows: rows queued by a memnode from before queue rows had a
// version (apitype.Event's JSON, byte for byte as it wrote them) still become the session,
// prompt and observation they were — a node upgraded with events queued loses none.
func TestBuildReadsUnversionedQueueRows(t *testing.T) {
	old := []string{
		`{"event_id":"e1","kind":"prompt","platform":"claude-code","session_id":"s","project":"p","cwd":"/w/p","at":"2026-12-01T10:00:00Z","prompt":"run the tests"}`,
		`{"event_id":"e2","kind":"observation","platform":"claude-code","session_id":"s","project":"p","cwd":"/w/p","at":"2026-12-01T10:00:01Z","tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"go test ./parser/..."},"tool_response":{"stdout":"ok  parser 0.1s"}}`,
	}
	var evs []store.PendingEvent
	for i, row := range old {
		evs = append(evs, store.PendingEvent{ID: int64(i + 1), EventID: "e" + string(rune('1'+i)), SessionID: "s", Project: "p", Payload: []byte(row)})
	}
	b, err := newPipeline(t, fakeStore{}).Build(context.Background(), fakeSessions{}, evs)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	if len(b.Sessions) != 1 || b.Sessions[0].Platform != "claude-code" || b.Sessions[0].StartedAt != at {
		t.Errorf("sessions %+v", b.Sessions)
	}
	if len(b.Prompts) != 1 || b.Prompts[0].Text != "run the tests" {
		t.Errorf("prompts %+v", b.Prompts)
	}
	if len(b.Observations) != 1 || b.Observations[0].ToolName != "Bash" || b.Observations[0].CreatedAt != at+1000 ||
		!strings.Contains(b.Observations[0].Title+b.Observations[0].Narrative, "parser") {
		t.Errorf("observations %+v", b.Observations)
	}
}

// TestQueueRowIsVersionedAndKeepsTheEvent: Ingest's rows carry their version and every field
// of the event, and read back as they were written.
func TestQueueRowIsVersionedAndKeepsTheEvent(t *testing.T) {
	ev := apitype.Event{EventID: "e9", Kind: memory.KindObservation, Platform: "codex", SessionID: "s", Project: "p", Cwd: "/w",
		At: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), ToolName: "Edit", ToolUseID: "t9", ToolInput: json.RawMessage(`{"file_path":"a.go"}`),
		ToolResponse: json.RawMessage(`{"ok":true}`), AgentID: "a1", AgentType: "sub", Reason: "r"}
	raw, err := json.Marshal(newQueueRow(ev))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), `{"v":1,`) {
		t.Fatalf("row without its version: %s", raw)
	}
	r, err := decodeQueueRow(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := newQueueRow(ev)
	if got, _ := json.Marshal(r); string(got) != string(raw) {
		t.Fatalf("read back %s, wrote %s (%+v)", got, raw, want)
	}
	if _, err := decodeQueueRow([]byte(`{"v":1,"kind":`)); err == nil {
		t.Fatal("a torn row decoded")
	}
}

// TestQueueRowCarriesEveryEventField: an event field the queue row has no place for would be
// dropped between Ingest and Build.
func TestQueueRowCarriesEveryEventField(t *testing.T) {
	row := map[string]bool{}
	for f := range reflect.TypeFor[queueRow]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		row[name] = true
	}
	for f := range reflect.TypeFor[apitype.Event]().Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); !row[name] {
			t.Errorf("apitype.Event's %q has no place in the queue row (queuerow.go): add it there and to newQueueRow", name)
		}
	}
}

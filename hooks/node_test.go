package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/platform/claudecode"

	"github.com/memnode/memnode/api/apitype"
)

// fakeNode stands in for the memnode node: it implements the parts of docs/API.md the hook
// uses (bearer auth, POST /api/events, GET /api/context, GET /api/observations/by-file) on
// a real HTTP server on 127.0.0.1. The real node is covered by the lead's e2e tests.
type fakeNode struct {
	srv   *httptest.Server
	token string

	mu      sync.Mutex
	events  []apitype.Event
	seen    bytes.Buffer // every request line and body, to grep for secrets
	context string
	byFile  map[string][]apitype.FileObservation
	// eventStatus, when set, is the status /api/events answers with.
	eventStatus int
	// semantic is what POST /api/context/semantic answers.
	semantic string
}

func newFakeNode(tb testing.TB) *fakeNode {
	tb.Helper()
	n := &fakeNode{token: "tok-" + memory.NewEventID(), byFile: map[string][]apitype.FileObservation{}}
	n.srv = httptest.NewServer(http.HandlerFunc(n.serve))
	tb.Cleanup(n.srv.Close)
	return n
}

func (n *fakeNode) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seen.WriteString(r.Method + " " + r.URL.String() + "\n")
	n.seen.Write(body)
	n.seen.WriteByte('\n')
	if r.URL.Path == "/health" {
		_, _ = io.WriteString(w, `{"status":"ok","ready":true}`)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+n.token {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/events":
		if n.eventStatus != 0 {
			http.Error(w, `{"error":"forced"}`, n.eventStatus)
			return
		}
		var ev apitype.Event
		if err := json.Unmarshal(body, &ev); err != nil || ev.EventID == "" || ev.Kind == "" {
			http.Error(w, `{"error":"bad event"}`, http.StatusBadRequest)
			return
		}
		n.events = append(n.events, ev)
		_ = json.NewEncoder(w).Encode(apitype.EventReply{OK: true, Status: "queued"})
	case r.Method == http.MethodGet && r.URL.Path == "/api/context":
		if r.URL.Query().Get("project") == "" {
			http.Error(w, `{"error":"project required"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, n.context)
	case r.Method == http.MethodPost && r.URL.Path == "/api/context/semantic":
		var req struct{ Prompt, Project string }
		if err := json.Unmarshal(body, &req); err != nil || req.Project == "" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, n.semantic)
	case r.Method == http.MethodGet && r.URL.Path == "/api/observations/by-file":
		_ = json.NewEncoder(w).Encode(apitype.FileObservations{Observations: n.byFile[r.URL.Query().Get("path")]})
	default:
		http.NotFound(w, r)
	}
}

func (n *fakeNode) Events() []apitype.Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]apitype.Event(nil), n.events...)
}

func (n *fakeNode) Seen() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.seen.String()
}

// config returns a hook config for a fresh data dir holding the node's token.
func (n *fakeNode) config(tb testing.TB) Config {
	tb.Helper()
	dir := tb.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(n.token+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return Config{
		DataDir: dir,
		BaseURL: n.srv.URL,
		Timeout: 10 * time.Second,
		Now:     func() time.Time { return time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC) },
	}
}

// hookRun is one Run's outcome.
type hookRun struct {
	out    map[string]any
	stdout string
	stderr string
	code   int
}

// runHook runs the claude-code hook and checks stdout holds exactly one JSON object.
func runHook(tb testing.TB, cfg Config, event string, payload any) hookRun {
	tb.Helper()
	var in []byte
	switch p := payload.(type) {
	case string:
		in = []byte(p)
	case []byte:
		in = p
	default:
		var err error
		if in, err = json.Marshal(p); err != nil {
			tb.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), cfg, claudecode.Platform(), event, bytes.NewReader(in), &stdout, &stderr)
	return hookRun{out: oneObject(tb, stdout.String()), stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func oneObject(tb testing.TB, s string) map[string]any {
	tb.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		tb.Fatalf("stdout is not a JSON object: %v\n%q", err, s)
	}
	if rest, _ := io.ReadAll(dec.Buffered()); strings.TrimSpace(string(rest)) != "" || !strings.HasSuffix(s, "}\n") {
		tb.Fatalf("stdout has more than one JSON object: %q", s)
	}
	return m
}

// spooled reads the spool without draining it.
func spooled(tb testing.TB, dataDir string) []apitype.Event {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "spool", "events.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		tb.Fatal(err)
	}
	var evs []apitype.Event
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ev apitype.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			tb.Fatalf("spool line %q: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

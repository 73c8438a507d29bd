package node

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
)

func startTestNode(tb testing.TB, delay time.Duration) *Node {
	tb.Helper()
	s := configs.Default()
	s.Port = 0 // any free port on 127.0.0.1
	return startNode(tb, Config{Settings: s, OpenDelay: delay})
}

// testSettings are the defaults on any free port of 127.0.0.1, with device sync off.
func testSettings() configs.Settings {
	s := configs.Default()
	s.Port = 0
	s.SyncDisabled = true
	return s
}

// startNode starts a node (in a temp data dir when cfg.DataDir is empty) and closes it
// when the test ends. It does not wait for readiness; readyNode does.
func startNode(tb testing.TB, cfg Config) *Node {
	tb.Helper()
	testkit.LeakCheck(tb) // before Start: its check runs after the node's Close
	if cfg.DataDir == "" {
		cfg.DataDir = tb.TempDir()
	}
	n, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { n.Close(context.Background()) })
	return n
}

// readyNode is startNode, then waits until the node is ready.
func readyNode(tb testing.TB, cfg Config) *Node {
	tb.Helper()
	n := startNode(tb, cfg)
	if err := n.WaitReady(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return n
}

func get(tb testing.TB, n *Node, path, token string) *http.Response {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+n.Addr()+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestHealthAnswersBeforeReadyAndDataRoutesWait(t *testing.T) {
	n := startTestNode(t, time.Hour) // the database "takes an hour" to open
	resp := get(t, n, "/health", "")
	var h struct{ Ready bool }
	json.NewDecoder(resp.Body).Decode(&h)
	if resp.StatusCode != 200 || h.Ready {
		t.Fatalf("health = %d ready=%v, want 200 and not ready", resp.StatusCode, h.Ready)
	}
	if r := get(t, n, "/api/status", n.token); r.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("data route before ready = %d, want 503", r.StatusCode)
	}
	if r := get(t, n, "/api/status", "not-the-token"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong token = %d, want 401", r.StatusCode)
	}
}

func TestSecondNodeOnSameDataDirIsRefused(t *testing.T) {
	n := startTestNode(t, 0)
	s := configs.Default()
	s.Port = 0
	other, err := New(Config{DataDir: n.cfg.DataDir, Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Start(context.Background()); err != ErrAlreadyRunning {
		t.Fatalf("second start: %v, want ErrAlreadyRunning", err)
	}
}

func TestPrivateTurnSkipsItsToolCalls(t *testing.T) {
	n := startTestNode(t, 0)
	ctx := context.Background()
	if err := n.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	evs := []apitype.Event{
		{Kind: memory.KindPrompt, SessionID: "s", Project: "p", Prompt: "refactor the parser"},
		{Kind: memory.KindObservation, SessionID: "s", Project: "p", ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"/p/parser.go","old_string":"a","new_string":"b"}`)},
		{Kind: memory.KindPrompt, SessionID: "s", Project: "p", Private: true},
		{Kind: memory.KindObservation, SessionID: "s", Project: "p", ToolName: "Edit", ToolInput: json.RawMessage(`{"file_path":"/p/hidden-plan.go","old_string":"a","new_string":"b"}`)},
		{Kind: memory.KindObservation, SessionID: "s", Project: "p", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"cat notes-hidden.txt"}`), ToolResponse: json.RawMessage(`{"stdout":"hidden notes"}`)},
		{Kind: memory.KindPrompt, SessionID: "s", Project: "p", Prompt: "now run the tests <private>pw SECRET-1</private>"},
		{Kind: memory.KindObservation, SessionID: "s", Project: "p", ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"go test ./parser/..."}`), ToolResponse: json.RawMessage(`{"stdout":"ok  parser 0.1s"}`)},
	}
	for i, ev := range evs {
		ev.At = at.Add(time.Duration(i) * time.Millisecond)
		if rep, err := n.Ingest(ctx, ev); err != nil || !rep.OK {
			t.Fatalf("ingest %d: %+v %v", i, rep, err)
		}
	}
	rep := n.Replica()
	testkit.WaitFor(t, "the queue to drain", 10*time.Second, func() bool {
		c, _ := rep.Counts(ctx)
		return c.Pending == 0 && c.Observations > 0
	})
	obs, _ := rep.RecentObservations(ctx, "p", 10)
	if len(obs) != 2 {
		t.Fatalf("observations = %d, want 2 (the private turn's two calls skipped)", len(obs))
	}
	dump, _ := rep.CanonicalDump(ctx)
	for _, bad := range []string{"hidden", "SECRET-"} {
		if strings.Contains(dump, bad) {
			t.Errorf("stored state contains %q:\n%s", bad, dump)
		}
	}
}

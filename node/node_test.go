package node

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/datadir"
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

// startingNode runs Start in the background; the channel yields what it returned.
func startingNode(tb testing.TB, cfg Config) (*Node, <-chan error) {
	tb.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = tb.TempDir()
	}
	n, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	started := make(chan error, 1)
	go func() { started <- n.Start(context.Background()) }()
	return n, started
}

func TestHealthAnswersBeforeReadyAndDataRoutesWait(t *testing.T) {
	testkit.LeakCheck(t)
	s := testSettings()
	n, started := startingNode(t, Config{Settings: s, OpenDelay: time.Hour}) // the database "takes an hour" to open
	tokenPath := datadir.Dir(n.cfg.DataDir).Token()
	var addr string
	testkit.WaitFor(t, "the API to listen", 10*time.Second, func() bool {
		b, err := os.ReadFile(datadir.Dir(n.cfg.DataDir).PID())
		var p datadir.PIDInfo
		if err != nil || json.Unmarshal(b, &p) != nil {
			return false
		}
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(p.Port))
		return true
	})
	token, err := os.ReadFile(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	do := func(path, tok string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	code, body := do("/health", "")
	var h struct{ Ready bool }
	json.Unmarshal(body, &h)
	if code != 200 || h.Ready {
		t.Fatalf("health = %d ready=%v, want 200 and not ready", code, h.Ready)
	}
	if code, _ := do("/api/status", strings.TrimSpace(string(token))); code != http.StatusServiceUnavailable {
		t.Fatalf("data route before ready = %d, want 503", code)
	}
	if code, _ := do("/api/status", "not-the-token"); code != http.StatusUnauthorized {
		t.Fatalf("wrong token = %d, want 401", code)
	}
	// Close aborts the start: Start returns, nothing is left running, the data dir is free.
	if err := n.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-started; !errors.Is(err, context.Canceled) {
		t.Fatalf("Start after Close = %v, want context.Canceled", err)
	}
	if n.Ready() || datadir.Held(n.cfg.DataDir) {
		t.Fatalf("after Close: ready=%v, data dir held=%v", n.Ready(), datadir.Held(n.cfg.DataDir))
	}
	if _, err := os.Stat(datadir.Dir(n.cfg.DataDir).PID()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("pid file left behind: %v", err)
	}
}

// TestCloseDuringStart closes a starting node (device sync on: it starts libp2p and
// memberlist) at random moments: every time, Start returns, Ready is false, the data dir is
// free, and no goroutine is left running (the leak check of each subtest).
func TestCloseDuringStart(t *testing.T) {
	runs := 100
	if testing.Short() {
		runs = 10
	}
	dir := t.TempDir()
	var early, late int
	for i := 0; i < runs; i++ {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			testkit.LeakCheck(t)
			s := testSettings()
			s.SyncDisabled = false
			s.SyncPort, s.GossipPort = -1, -1 // any free port
			n, started := startingNode(t, Config{DataDir: dir, Settings: s})
			// The moment is the test's input, not a wait for something: spread evenly from at
			// once (run 0: before any start completes) to a little after a start usually
			// completes, so both sides are hit on every run count (-short's 10 too; random
			// moments missed "before ready" in ~half of the -short runs).
			time.Sleep(time.Duration(i) * 400 * time.Millisecond / time.Duration(runs))
			wasReady := n.Ready()
			if err := n.Close(context.Background()); err != nil {
				t.Fatalf("close: %v", err)
			}
			err := <-started
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrClosed) {
				t.Fatalf("Start = %v; want nil, context.Canceled or ErrClosed (closed before it began)", err)
			}
			if n.Ready() {
				t.Fatal("Ready after Close")
			}
			if n.sync.Load() != nil || n.rep.Load() != nil || n.embedW.Load() != nil {
				t.Fatal("a part is still installed after Close")
			}
			if datadir.Held(dir) {
				t.Fatal("the data dir is still locked after Close")
			}
			if wasReady {
				late++
			} else {
				early++
			}
		})
	}
	t.Logf("closed %d starts before ready, %d after", early, late)
	if early == 0 {
		t.Error("no run closed the node before it was ready: the moments miss the start")
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

// TestLoneSessionEndMakesNoSession: a SessionEnd for a session nothing happened in (what
// `claude mcp list` sends) stores nothing; a session that started does end.
func TestLoneSessionEndMakesNoSession(t *testing.T) {
	n := startTestNode(t, 0)
	ctx := context.Background()
	if err := n.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	evs := []apitype.Event{
		{Kind: memory.KindSessionEnd, SessionID: "lone", Project: "p", Reason: "other"},
		{Kind: memory.KindSessionStart, SessionID: "real", Project: "p", Reason: "startup"},
		{Kind: memory.KindSessionEnd, SessionID: "real", Project: "p", Reason: "prompt_input_exit"},
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
		return c.Pending == 0 && c.Sessions > 0
	})
	if c, _ := rep.Counts(ctx); c.Sessions != 1 {
		t.Fatalf("sessions = %d, want 1 (the lone SessionEnd makes none)", c.Sessions)
	}
	if _, known, err := rep.SessionState(ctx, "lone"); err != nil || known {
		t.Fatalf("lone session stored: %v %v", known, err)
	}
}

package node

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// benchNode is a ready node whose project p holds n observations of test runs, and its
// API token.
func benchNode(b *testing.B, n int) (*Node, string) {
	b.Helper()
	nd := readyNode(b, Config{Settings: testSettings()})
	var batch store.Batch
	batch.Sessions = []memory.Session{{ID: "s", Project: "p", StartedAt: 1}}
	for i := range n {
		batch.Observations = append(batch.Observations, memory.Observation{SessionID: "s", Project: "p", Type: "discovery",
			Title: fmt.Sprintf("finding %d: go test ./pkg%d ran the tests, ok", i, i%40), Narrative: "the parser reads the header before the body",
			Facts: []string{"one fact", "another fact"}, ToolName: "Read", CreatedAt: time.Now().UnixMilli() - int64(1000*(n-i))})
	}
	if _, err := nd.Replica().Commit(context.Background(), &batch); err != nil {
		b.Fatal(err)
	}
	tok, err := datadir.Dir(nd.cfg.DataDir).ReadToken()
	if err != nil {
		b.Fatal(err)
	}
	return nd, tok
}

// benchGET times GET paths in turn over one keep-alive connection and reports CPU-ms
// per request (the whole process: handler, HTTP, background work).
func benchGET(b *testing.B, nd *Node, tok string, paths []string) {
	b.Helper()
	hc := &http.Client{}
	reqs := make([]*http.Request, len(paths))
	for i, p := range paths {
		reqs[i], _ = http.NewRequest(http.MethodGet, "http://"+nd.Addr()+p, nil)
		reqs[i].Header.Set("Authorization", "Bearer "+tok)
	}
	b.ResetTimer()
	cpu := testkit.ProcessCPU(b)
	for i := range b.N {
		resp, err := hc.Do(reqs[i%len(reqs)])
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) < 3 {
			b.Fatalf("%d, %d bytes", resp.StatusCode, len(body))
		}
	}
	b.ReportMetric(float64(testkit.ProcessCPU(b)-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkContextHTTP is GET /api/context over one keep-alive connection to a ready node
// whose project holds 100 observations: the node-side cost memnode-bench's "context p50"
// times.
func BenchmarkContextHTTP(b *testing.B) {
	nd, tok := benchNode(b, 100)
	benchGET(b, nd, tok, []string{"/api/context?project=p"})
}

// BenchmarkSearchHTTP is GET /api/search in a project of 2,000 observations, memnode-bench's
// "search p50" queries in turn (limit 20).
func BenchmarkSearchHTTP(b *testing.B) {
	nd, tok := benchNode(b, 2000)
	var paths []string
	for _, q := range []string{"test", "ok", "run tests", "go test"} {
		paths = append(paths, "/api/search?"+url.Values{"query": {q}, "project": {"p"}, "limit": {"20"}}.Encode())
	}
	benchGET(b, nd, tok, paths)
}

// BenchmarkIngestHTTP is memnode-bench's "ingest to records": b.N Bash observation events
// POSTed to /api/events over 4 keep-alive clients (4 sessions, one prompt each first), then
// the queue drained into records by the node's workers. It reports CPU-µs per event (the
// whole process: intake, workers, commits, everything the commits wake).
func BenchmarkIngestHTTP(b *testing.B) {
	ctx := context.Background()
	nd, tok := benchNode(b, 0)
	hc := &http.Client{}
	post := func(ev apitype.Event) {
		body, _ := json.Marshal(ev)
		req, _ := http.NewRequest(http.MethodPost, "http://"+nd.Addr()+"/api/events", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			b.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			b.Errorf("POST /api/events: %d", resp.StatusCode)
		}
	}
	const conc = 4
	for s := range conc {
		post(apitype.Event{EventID: fmt.Sprint("p", s), Kind: memory.KindPrompt, Platform: "claude-code", SessionID: fmt.Sprint("bench-", s),
			Project: "p", Cwd: "/work/demo", At: time.Now().UTC(), Prompt: "make the test suite pass"})
	}
	bodies := make([]apitype.Event, b.N)
	for i := range bodies {
		in, _ := json.Marshal(map[string]string{"command": fmt.Sprintf("go test ./pkg/x%d/... -run Test%d", i%97, i), "description": "run tests"})
		out, _ := json.Marshal(map[string]any{"stdout": fmt.Sprintf("ok  \texample.com/x%d\t0.%ds\nPASS %d tests of the store", i%89, i%1000, i), "stderr": ""})
		bodies[i] = apitype.Event{EventID: fmt.Sprint("e", i), Kind: memory.KindObservation, Platform: "claude-code", SessionID: fmt.Sprint("bench-", i%conc),
			Project: "p", Cwd: "/work/demo", At: time.Now().UTC(), ToolName: "Bash", ToolUseID: fmt.Sprint("toolu_", i), ToolInput: in, ToolResponse: out}
	}
	base := func() int64 {
		st, err := nd.Status(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return st.Queue.Processed
	}
	testkit.WaitFor(b, "the prompts to be processed", time.Minute, func() bool { return base() >= conc })
	b.ResetTimer()
	cpu := testkit.ProcessCPU(b)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				post(bodies[i])
			}
		}()
	}
	wg.Wait()
	testkit.WaitFor(b, "the queue to drain", 10*time.Minute, func() bool { return base() >= int64(conc+b.N) })
	b.StopTimer()
	b.ReportMetric(float64(testkit.ProcessCPU(b)-cpu)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
}

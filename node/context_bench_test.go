package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// benchNode is a ready node whose project p holds n observations of test runs, and its
// API token.
func benchNode(b *testing.B, n int) (*Node, string) {
	b.Helper()
	nd := readyNode(b, Config{Settings: testSettings()})
	var batch replica.Batch
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

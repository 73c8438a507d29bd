package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/datadir"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
)

// BenchmarkContextHTTP is GET /api/context over one keep-alive connection to a ready node
// whose project holds 100 observations: the node-side cost memnode-bench's "context p50"
// times. It reports CPU-ms per request (the whole process: handler, HTTP, background work).
func BenchmarkContextHTTP(b *testing.B) {
	ctx := context.Background()
	n := readyNode(b, Config{Settings: testSettings()})
	var batch replica.Batch
	batch.Sessions = []memory.Session{{ID: "s", Project: "p", StartedAt: 1}}
	for i := range 100 {
		batch.Observations = append(batch.Observations, memory.Observation{SessionID: "s", Project: "p", Type: "discovery",
			Title: fmt.Sprintf("finding %d", i), Narrative: "the parser reads the header before the body",
			Facts: []string{"one fact", "another fact"}, ToolName: "Read", CreatedAt: time.Now().UnixMilli() - int64(1000*(100-i))})
	}
	if _, err := n.Replica().Commit(ctx, &batch); err != nil {
		b.Fatal(err)
	}
	tok, err := datadir.Dir(n.cfg.DataDir).ReadToken()
	if err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{}
	req, _ := http.NewRequest(http.MethodGet, "http://"+n.Addr()+"/api/context?project=p", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	b.ResetTimer()
	cpu := testkit.ProcessCPU(b)
	for range b.N {
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			b.Fatalf("%d, %d bytes", resp.StatusCode, len(body))
		}
	}
	b.ReportMetric(float64(testkit.ProcessCPU(b)-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

package inject_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/inject"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

// BenchmarkContext is the node's session-start context (node.Context: inject.Read, the
// shown observations' short IDs, inject.Render) over a real replica of 100 observations,
// with the default limits. It reports CPU-ms per context.
func BenchmarkContext(b *testing.B) {
	ctx := context.Background()
	r := benchReplica(b, func(i int) memory.Observation {
		return memory.Observation{Type: "discovery", Title: fmt.Sprintf("finding %d", i),
			Narrative: "the parser reads the header before the body", Facts: []string{"one fact", "another fact"}}
	})
	lim := inject.Limits{Observations: 50, Full: 5, Sessions: 3}
	b.ResetTimer()
	cpu := testkit.ProcessCPU(b)
	for range b.N {
		in, err := inject.Read(ctx, r, "p", lim)
		if err != nil {
			b.Fatal(err)
		}
		ids := make([]string, len(in.Observations))
		for i, o := range in.Observations {
			ids[i] = o.ID
		}
		if in.ShortIDs, err = r.ShortIDs(ctx, ids); err != nil {
			b.Fatal(err)
		}
		if out := inject.Render(in, lim); !strings.Contains(out, "finding 99") {
			b.Fatalf("context without the newest observation:\n%s", out)
		}
	}
	b.ReportMetric(float64(testkit.ProcessCPU(b)-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkRender is inject.Render alone over BenchmarkContext's input (read once): the
// provenance quoting and the instruction check per shown observation.
func BenchmarkRender(b *testing.B) {
	ctx := context.Background()
	r := benchReplica(b, func(i int) memory.Observation {
		return memory.Observation{Type: "discovery", Title: fmt.Sprintf("Tests pass: go test ./pkg%d/... -run Test%d", i%40, i),
			Subtitle: "all passed", Narrative: "Ran go test: all tests passed. While working on: \"make the test suite pass\".",
			Facts: []string{"$ go test ./pkg/x/...", "ok example.com/x 0.2s"}, ToolName: "Bash"}
	})
	lim := inject.Limits{Observations: 50, Full: 5, Sessions: 3}
	in, err := inject.Read(ctx, r, "p", lim)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if out := inject.Render(in, lim); !strings.Contains(out, "Test99") {
			b.Fatalf("context without the newest observation:\n%s", out)
		}
	}
}

// benchReplica is a replica whose project p holds 100 observations of one session, obs(i)
// with its session, project and time filled in (the newest last).
func benchReplica(b *testing.B, obs func(i int) memory.Observation) *replica.Replica {
	b.Helper()
	r := testkit.OpenReplica(b, "origin-bench")
	batch := store.Batch{Sessions: []memory.Session{{ID: "s", Project: "p", StartedAt: 1}}}
	for i := range 100 {
		o := obs(i)
		o.SessionID, o.Project, o.CreatedAt = "s", "p", int64(i+1)
		batch.Observations = append(batch.Observations, o)
	}
	if _, err := r.Commit(context.Background(), &batch); err != nil {
		b.Fatal(err)
	}
	return r
}

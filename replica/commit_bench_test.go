package replica

import (
	"context"
	"fmt"
	"github.com/memnode/memnode/store"
	"path/filepath"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

// BenchmarkCommit is the workers' commit of a claim: 50 observations of test runs (with
// files and facts, as the offline compressor writes them) in one local Commit, into a
// replica that grows as it runs. It reports CPU-µs per observation (the whole process).
func BenchmarkCommit(b *testing.B) {
	ctx := context.Background()
	r, err := Open(ctx, Config{Path: filepath.Join(b.TempDir(), "memnode.db"), Origin: "origin-bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	const perBatch = 50
	b.ResetTimer()
	var cpu time.Duration
	for i := range b.N {
		batch := &store.Batch{Sessions: []memory.Session{{ID: fmt.Sprint("s", i%8), Project: "bench", StartedAt: 1}}}
		for j := range perBatch {
			n := i*perBatch + j
			batch.Observations = append(batch.Observations, memory.Observation{SessionID: batch.Sessions[0].ID, Project: "bench",
				Type: "change", Title: fmt.Sprintf("go test ./pkg%d/... passed", n), Subtitle: "ran the package's tests",
				Narrative: fmt.Sprintf("ok  github.com/x/pkg%d 0.%03ds PASS", n, n%1000),
				Facts:     []string{"tests pass", fmt.Sprint("TestThing", n)}, FilesRead: []string{fmt.Sprintf("pkg%d/thing_test.go", n)},
				ToolName: "Bash", CreatedAt: int64(n + 1)})
		}
		start := cpuTime()
		res, err := r.Commit(ctx, batch)
		cpu += cpuTime() - start
		if err != nil || len(res.Observations) != perBatch {
			b.Fatalf("commit: %d stored, %v", len(res.Observations), err)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*perBatch), "cpu-µs/obs")
}

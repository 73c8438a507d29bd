package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/ai/offline"
	"github.com/memnode/memnode/internal/testkit"
)

// BenchmarkProcess is the workers' side of `make bench`'s "pipeline obs/s" without HTTP:
// b.N Bash events over 8 sessions, queued on a real replica first (not timed), then
// turned into records.
func BenchmarkProcess(b *testing.B) {
	rep := testkit.OpenReplica(b, "origin-bench")
	p, err := New(Config{Store: rep, Compressor: offline.New(), Workers: 2, Linger: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range b.N {
		ev := bash(fmt.Sprintf("go test ./pkg%d/... -run TestThing%d", i, i), fmt.Sprintf("ok  github.com/x/pkg%d 0.%03ds\nPASS", i, i%1000))
		ev.SessionID, ev.Project = fmt.Sprintf("s%d", i%8), "bench"
		if _, err := p.Ingest(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	p.Start()
	testkit.WaitFor(b, "the queue to drain", 10*time.Minute, func() bool {
		return p.Stats().Processed == int64(b.N)
	})
	b.StopTimer()
	p.Close()
}

// BenchmarkIngest is the intake side: validate, policy, clean, durable enqueue, from
// concurrent callers as the API's handlers are.
func BenchmarkIngest(b *testing.B) {
	rep := testkit.OpenReplica(b, "origin-bench")
	p, err := New(Config{Store: rep, Compressor: offline.New()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			ev := bash(fmt.Sprintf("go test ./pkg%d/... -run TestThing%d", i, i), fmt.Sprintf("ok  github.com/x/pkg%d 0.%03ds\nPASS", i, i%1000))
			ev.SessionID, ev.Project = fmt.Sprintf("s%d", i%8), "bench"
			if _, err := p.Ingest(ctx, ev); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

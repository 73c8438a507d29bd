package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/ai/offline"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
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
// concurrent callers as the API's handlers are. "gate" is the pipeline as it runs (the
// private-turn gate answered from its per-session cache); "gate-uncached" empties that
// cache before every event, so each tool call pays the gate's two reads (LastQueuedPrompt,
// then SessionState) as before the cache; "no-gate" answers those reads without the
// database, as the pipeline did before the gate. cpu-µs/op is the process's CPU time per
// event (less noisy than ns/op on a shared machine).
func BenchmarkIngest(b *testing.B) {
	for _, c := range []struct {
		name  string
		store func(*replica.Replica) Store
	}{
		{"gate", func(r *replica.Replica) Store { return r }},
		{"gate-uncached", func(r *replica.Replica) Store { return &forgetsAlways{Replica: r} }},
		{"no-gate", func(r *replica.Replica) Store { return noGate{r} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			rep := testkit.OpenReplica(b, "origin-bench")
			p, err := New(Config{Store: c.store(rep), Compressor: offline.New()})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			var next atomic.Int64
			b.SetParallelism(4)
			cpu0 := processCPU(b)
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
			b.StopTimer()
			b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// forgetsAlways is the replica as if a forget committed before every event: the pipeline's
// private-turn cache never holds.
type forgetsAlways struct {
	*replica.Replica
	epoch atomic.Uint64
}

func (f *forgetsAlways) ForgetEpoch() uint64 { return f.epoch.Add(1) }

// noGate is the replica with the private-turn gate's reads answered for free: no prompt
// queued, the session unknown.
type noGate struct{ *replica.Replica }

func (noGate) LastQueuedPrompt(context.Context, string) (store.PendingEvent, bool, error) {
	return store.PendingEvent{}, false, nil
}

func (noGate) SessionState(_ context.Context, id string) (store.SessionState, bool, error) {
	return store.SessionState{SessionID: id}, false, nil
}

// processCPU is the user+system CPU time this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

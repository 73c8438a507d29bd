package team

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/store"
)

// BenchmarkTeamCatchUp measures a late member's catch-up on a real 3-node rqlite cluster
// holding 10,000 records of one member: ops/s (wall) and the member's CPU time per 1,000
// ops (the cluster's rqlited processes are not counted), each b.N a new member. "serial"
// is the pull before the pipeline (one batch at a time, one verifying goroutine),
// "pipelined" the default; both run on the same cluster in the same run, so the machine's
// load is shared alike. Run with -benchtime 2x.
func BenchmarkTeamCatchUp(b *testing.B) {
	ctx := context.Background()
	c := rqlitetest.Start(b, rqlitetest.Options{Nodes: 3, Users: users()})
	const P, n = "bench", 10000
	a := newMember(b, "alice", "laptop")
	a.join(b, c, P)
	for k := 0; k < n; k += 500 {
		batch := &store.Batch{}
		for j := k; j < k+500; j++ {
			batch.Observations = append(batch.Observations, obs(P, fmt.Sprintf("bulk %d", j), j))
		}
		if _, err := a.r.Commit(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	if err := a.t.Push(ctx); err != nil {
		b.Fatal(err)
	}
	b.Run("serial", func(b *testing.B) {
		benchCatchUp(b, c, P, n, func(cfg *Config) { cfg.PullAhead, cfg.VerifyWorkers = -1, 1 })
	})
	b.Run("pipelined", func(b *testing.B) { benchCatchUp(b, c, P, n, nil) })
}

func benchCatchUp(b *testing.B, c *rqlitetest.Cluster, P string, n int, tune func(*Config)) {
	ctx := context.Background()
	var wall, cpu time.Duration
	ops := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		late := newTunedMember(b, "carol", fmt.Sprintf("%s%d", b.Name(), i), tune)
		late.join(b, c, P)
		b.StartTimer()
		cpu0, start := cpuTime(), time.Now()
		got, err := late.t.Pull(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		cpu += cpuTime() - cpu0
		ops += got
		if have := late.count(b, P); have != n {
			b.Fatalf("late member holds %d records, want %d", have, n)
		}
	}
	b.ReportMetric(float64(ops)/wall.Seconds(), "catchup-ops/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/(float64(ops)/1000), "cpu-ms/1k-ops")
	b.ReportMetric(0, "ns/op")
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package replica

import (
	"context"
	"fmt"
	"github.com/memnode/memnode/store"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/memory"
)

// BenchmarkApplyOps applies a remote device's observation ops to a fresh replica in
// batches of 500 (what a catch-up pull hands ApplyOps) and reports the CPU time per 1,000
// applied ops (user+system of the process, so a loaded machine does not inflate it).
//
//	go test -tags sqlite_fts5,nomsgpack -run '^$' -bench BenchmarkApplyOps -benchtime 3x ./replica/
func BenchmarkApplyOps(b *testing.B) {
	const n, batch = 2000, 500
	ctx := context.Background()
	src := benchSource(b, n, batch)
	ops, err := src.OpsSince(ctx, src.Origin(), 0, 1_000_000)
	if err != nil || len(ops) != n+1 {
		b.Fatalf("ops since: %d ops, %v", len(ops), err)
	}
	benchIntoFresh(b, src, uint64(len(ops)), func(dst *Replica) int {
		applied := 0
		for k := 0; k < len(ops); k += batch {
			res, err := dst.ApplyOps(ctx, ops[k:min(k+batch, len(ops))])
			if err != nil {
				b.Fatal(err)
			}
			applied += res.Applied
		}
		return applied
	})
}

// benchIntoFresh runs fill b.N times, each into a fresh replica, checks that each ends
// holding src's ops up to seq want, and reports the CPU time of fill per 1,000 ops it
// stored (the count fill returns).
func benchIntoFresh(b *testing.B, src *Replica, want uint64, fill func(dst *Replica) int) {
	ctx := context.Background()
	var cpu time.Duration
	stored := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dst, err := Open(ctx, Config{Path: filepath.Join(b.TempDir(), "memnode.db"), Origin: "dev-dst"})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := cpuTime()
		stored += fill(dst)
		cpu += cpuTime() - start
		b.StopTimer()
		if got, err := dst.VersionVector(ctx); err != nil || got[src.Origin()] != want {
			b.Fatalf("version vector after the fill: %v, %v", got, err)
		}
		dst.Close()
		b.StartTimer()
	}
	if stored != b.N*int(want) {
		b.Fatalf("stored %d ops, want %d", stored, b.N*int(want))
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/(float64(stored)/1000), "cpu-ms/1k-ops")
}

// benchSource is a replica holding one session and n observations committed in batches.
func benchSource(b *testing.B, n, batch int) *Replica {
	ctx := context.Background()
	src := openTest(b, "dev-src")
	now := time.Now().UnixMilli()
	if _, err := src.Commit(ctx, &store.Batch{Sessions: []memory.Session{{ID: "s1", Project: "demo", StartedAt: now}}}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += batch {
		var obs []memory.Observation
		for j := i; j < i+batch; j++ {
			obs = append(obs, memory.Observation{SessionID: "s1", Project: "demo", Type: "discovery",
				Title: fmt.Sprintf("Observation %d about the login flow", j), Narrative: fmt.Sprintf("narrative %d: the token expires early", j),
				Facts: []string{"fact one", fmt.Sprintf("fact %d", j)}, Concepts: []string{"how-it-works"},
				FilesRead: []string{"internal/auth/token.go"}, FilesModified: []string{fmt.Sprintf("internal/auth/f%d.go", j%50)},
				CreatedAt: now + int64(j)})
		}
		if _, err := src.Commit(ctx, &store.Batch{Observations: obs}); err != nil {
			b.Fatal(err)
		}
	}
	return src
}

// BenchmarkInstallSnapshot is BenchmarkApplyOps's history taken as a snapshot (Snapshot,
// chunks of 2 MiB, in memory) and installed in a fresh replica; CPU per 1,000 ops covers
// both the read and the install.
//
//	go test -tags sqlite_fts5,nomsgpack -run '^$' -bench 'BenchmarkApplyOps|BenchmarkInstallSnapshot' -benchtime 3x ./replica/
func BenchmarkInstallSnapshot(b *testing.B) {
	const n, batch = 2000, 500
	ctx := context.Background()
	src := benchSource(b, n, batch)
	benchIntoFresh(b, src, n+1, func(dst *Replica) int {
		var chunks []store.SnapshotChunk
		if err := src.Snapshot(ctx, store.SnapshotCursor{}, 2<<20, func(c store.SnapshotChunk) error { chunks = append(chunks, c); return nil }); err != nil {
			b.Fatal(err)
		}
		k := 0
		res, err := dst.InstallSnapshot(ctx, func() (store.SnapshotChunk, error) { k++; return chunks[k-1], nil })
		if err != nil {
			b.Fatal(err)
		}
		return res.Ops
	})
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// An observation op arriving after its session was forgotten is kept (its seq moves the
// version vector on) without its content: one tombstone lookup covers the record and its
// session.
func TestApplyOpsDropsObservationOfForgottenSession(t *testing.T) {
	ctx := context.Background()
	a, b := openTest(t, "dev-a"), openTest(t, "dev-b")
	now := time.Now().UnixMilli()
	if _, err := a.Commit(ctx, &store.Batch{
		Sessions:     []memory.Session{{ID: "s1", Project: "demo", StartedAt: now}},
		Observations: []memory.Observation{{SessionID: "s1", Project: "demo", Type: "discovery", Title: "late copy", Narrative: "pepper-ratio-7", CreatedAt: now}},
	}); err != nil {
		t.Fatal(err)
	}
	ops, err := a.OpsSince(ctx, "dev-a", 0, 100)
	if err != nil || len(ops) != 2 || ops[1].Kind != store.OpObservation {
		t.Fatalf("ops of a: %+v, %v", ops, err)
	}
	if _, err := b.ApplyOps(ctx, ops[:1]); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Forget(ctx, []string{"s1"}); err != nil || n != 1 {
		t.Fatalf("forget session: %d, %v", n, err)
	}
	res, err := b.ApplyOps(ctx, ops[1:])
	if err != nil || res.Applied != 1 {
		t.Fatalf("apply the observation op: %+v, %v", res, err)
	}
	if vv, _ := b.VersionVector(ctx); vv["dev-a"] != 2 {
		t.Fatalf("version vector = %v, want dev-a:2", vv)
	}
	if has, _ := b.OpPayloadContains(ctx, "pepper-ratio-7"); has {
		t.Fatal("the op-log holds the content of a forgotten session's observation")
	}
	if dump, _ := b.CanonicalDump(ctx); strings.Contains(dump, "pepper") {
		t.Fatalf("a forgotten session's observation was stored:\n%s", dump)
	}
}

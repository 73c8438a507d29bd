package team

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

// BenchmarkTeam prints `make bench`'s team figures on a real 3-node rqlite cluster: push
// throughput from one member, A→B latency (hook commit on A → record in B's replica) p50 and
// p99, a late member's catch-up rate, and `search --team` p50 with 100k records on the
// cluster. Run with -benchtime 1x: each figure is one measurement, not a loop.
func BenchmarkTeam(b *testing.B) {
	ctx := context.Background()
	c := rqlitetest.Start(b, rqlitetest.Options{Nodes: 3, Users: users()})
	const P = "bench"
	a, m := newMember(b, "alice", "laptop"), newMember(b, "bob", "desktop")
	a.join(b, c, P)
	m.join(b, c, P)
	a.t.Start(ctx)
	m.t.Start(ctx)
	for i := 0; i < b.N; i++ {
		// A→B latency, one record at a time.
		var lat []time.Duration
		for j := 0; j < 50; j++ {
			title := fmt.Sprintf("latency probe %d-%d", i, j)
			start := time.Now()
			a.record(b, P, title)
			testkit.WaitFor(b, "probe on B", 10*time.Second, func() bool { return m.has(b, title) })
			lat = append(lat, time.Since(start))
		}
		sort.Slice(lat, func(x, y int) bool { return lat[x] < lat[y] })
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]

		// Push throughput: 10,000 records committed on A until the cluster has them all.
		m.t.Close()
		const n = 10000
		start := time.Now()
		for k := 0; k < n; k += 500 {
			batch := &store.Batch{}
			for j := k; j < k+500; j++ {
				batch.Observations = append(batch.Observations, obs(P, fmt.Sprintf("bulk %d-%d", i, j), j))
			}
			if _, err := a.r.Commit(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		testkit.WaitFor(b, "bulk pushed", 120*time.Second, func() bool {
			st, _ := a.t.LocalStatus(ctx)
			return st.PushBacklog == 0 && st.Reachable
		})
		push := float64(n) / time.Since(start).Seconds()

		// Catch-up of a member that joins now.
		late := newMember(b, "carol", fmt.Sprintf("late%d", i))
		late.join(b, c, P)
		start = time.Now()
		got, err := late.t.Pull(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		catchup := float64(got) / time.Since(start).Seconds()

		// search --team at 100k records: fill team_records straight (search reads only it).
		admin := newRQ(c.URLs(), rqlitetest.Admin, c.AdminPassword, 30*time.Second)
		var have int
		if res, err := admin.query(ctx, levelWeak, []stmt{st(`SELECT COUNT(*) FROM team_records`)}); err == nil {
			have, _ = intOf(res[0].Values[0][0])
		}
		for k := have; k < 100000; k += 2000 {
			var batch []stmt
			for j := k; j < k+2000 && j < 100000; j++ {
				batch = append(batch, st(`INSERT OR IGNORE INTO team_records(id, project, kind, type, author, origin, title, body, created_at) VALUES (?, ?, 'observation', 'change', 'bench/x', 'x', ?, ?, ?)`,
					fmt.Sprintf("bench-%d", j), P, fmt.Sprintf("%s change %d in module %d", words[j%len(words)], j, j%97),
					fmt.Sprintf("narrative %s %s %d", words[(j/7)%len(words)], words[(j/13)%len(words)], j), j))
			}
			if _, err := admin.execute(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		var sl []time.Duration
		for j := 0; j < 100; j++ {
			q := words[j%len(words)] + " " + words[(j*3)%len(words)]
			start := time.Now()
			if _, err := a.t.Search(ctx, q, "", 20); err != nil {
				b.Fatal(err)
			}
			sl = append(sl, time.Since(start))
		}
		sort.Slice(sl, func(x, y int) bool { return sl[x] < sl[y] })
		b.ReportMetric(float64(p50.Milliseconds()), "a→b-p50-ms")
		b.ReportMetric(float64(p99.Milliseconds()), "a→b-p99-ms")
		b.ReportMetric(push, "push-rec/s")
		b.ReportMetric(catchup, "catchup-ops/s")
		b.ReportMetric(float64(sl[len(sl)/2].Microseconds())/1000, "team-search-p50-ms")
		fmt.Printf("team: push %.0f records/s (one member, 3-node rqlite); A→B p50 %s p99 %s; late member catch-up %.0f ops/s (%d ops); search --team p50 %s at 100k records\n",
			push, p50.Round(time.Millisecond), p99.Round(time.Millisecond), catchup, got, sl[len(sl)/2].Round(100*time.Microsecond))
	}
}

var words = []string{"invoice", "retry", "gradle", "daemon", "migration", "schema", "token", "cache", "deadlock", "timeout",
	"billing", "webhook", "parser", "fixture", "rollback", "index", "cursor", "leader", "snapshot", "payload"}

package sync

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

func benchObservation(i int) memory.Observation {
	return memory.Observation{
		SessionID: fmt.Sprintf("bench-%d", i/100), Project: "bench", Type: "change",
		Title:     fmt.Sprintf("Refactor handler %d to stream results", i),
		Narrative: "Replaced the buffered response with a streaming writer so large result sets no longer hold the whole page in memory; added a flush after each row group.",
		Facts:     []string{"handler streams rows", "flush every 64 rows"}, FilesModified: []string{fmt.Sprintf("api/handler_%d.go", i%50)},
		CreatedAt: int64(1_700_000_000_000 + i),
	}
}

// fill commits n observations at t (in batches, as the queue worker does).
func (t *tnode) fill(n, batch int) {
	t.tb.Helper()
	for i := 0; i < n; i += batch {
		b := &store.Batch{}
		for j := i; j < min(n, i+batch); j++ {
			b.Observations = append(b.Observations, benchObservation(j+int(time.Now().UnixNano()%1_000_000)*1000))
		}
		if _, err := t.rep.Commit(context.Background(), b); err != nil {
			t.tb.Fatal(err)
		}
	}
}

func (t *tnode) vv() store.VersionVector {
	vv, err := t.rep.VersionVector(context.Background())
	if err != nil {
		t.tb.Fatal(err)
	}
	return vv
}

// BenchmarkReplicate10k: a new device joins and pulls 10,000 ops from A over real libp2p, by
// op replay (BenchmarkCatchUp/snapshot measures the snapshot).
// Reports ms per 10k ops and bytes on the wire per op.
func BenchmarkReplicate10k(b *testing.B) {
	const total = 10_000
	a := startNode(b, "a", b.TempDir(), nil)
	a.fill(total, 500)
	var elapsed time.Duration
	var bytes int64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		nb := startNode(b, fmt.Sprintf("b%d", i), b.TempDir(), nil, snapshotsOff, func(c *nodeSetup) { c.AntiEntropyInterval = time.Hour })
		sent := a.node.stats.BytesSent.Load() + a.node.stats.BytesRecv.Load()
		b.StartTimer()
		start := time.Now()
		nb.join(a)
		waitFor(b, time.Minute, "10k ops on b", func() (bool, string) {
			got := nb.vv()[a.node.ID().String()]
			return got >= total, fmt.Sprint(got)
		})
		elapsed += time.Since(start)
		b.StopTimer()
		bytes += a.node.stats.BytesSent.Load() + a.node.stats.BytesRecv.Load() - sent
		nb.stop()
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/10k-ops")
	b.ReportMetric(float64(bytes)/float64(b.N*total), "wire-bytes/op")
}

// BenchmarkHeal5: five devices split 2|3 by a partition, each side writes, the partition
// heals; reports the time until all five hold every op.
func BenchmarkHeal5(b *testing.B) {
	const perNode = 200
	nodes := make([]*tnode, 5)
	for i := range nodes {
		nodes[i] = startNode(b, fmt.Sprintf("n%d", i), b.TempDir(), nil)
		if i > 0 {
			nodes[i].join(nodes[0])
		}
	}
	ids := func(ns []*tnode) []peer.ID {
		var out []peer.ID
		for _, n := range ns {
			out = append(out, n.node.ID())
		}
		return out
	}
	left, right := nodes[:2], nodes[2:]
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for _, n := range left {
			n.node.setCut(ids(right))
		}
		for _, n := range right {
			n.node.setCut(ids(left))
		}
		for _, n := range nodes {
			n.fill(perNode, 50)
			n.node.NotifyLocalWrite()
		}
		b.StartTimer()
		start := time.Now()
		for _, n := range nodes {
			n.node.setCut(nil)
			kick(n.node.stateKick) // what memberlist's join event does when a real partition heals
		}
		waitFor(b, time.Minute, "5 nodes to converge", func() (bool, string) {
			want := fmt.Sprint(nodes[0].vv())
			for _, n := range nodes[1:] {
				if got := fmt.Sprint(n.vv()); got != want {
					return false, want + " vs " + got
				}
			}
			return true, ""
		})
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/heal")
}

// BenchmarkOpLogOverhead compares replica.Commit with the op-log against the same Commit for
// a local-only project (identical path, no op appended) and against a plain INSERT of the
// same rows into a scratch table. The files live on tmpfs when available so fsync latency
// does not hide CPU cost (on a disk every ratio moves towards 1).
func BenchmarkOpLogOverhead(b *testing.B) {
	const batch = 10
	dir := b.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "memnode-bench-"); err == nil {
			dir = d
			b.Cleanup(func() { os.RemoveAll(d) })
		}
	}
	ctx := context.Background()
	open := func(name string, localOnly bool) *replica.Replica {
		r, err := replica.Open(ctx, replica.Config{Path: filepath.Join(dir, name+".db"), Origin: "bench-" + name,
			LocalOnly: func(string) bool { return localOnly }})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		return r
	}
	withOps, withoutOps := open("oplog", false), open("localonly", true)
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_synchronous", "FULL")
	plain, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "plain.db")+"?"+q.Encode())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { plain.Close() })
	plain.SetMaxOpenConns(1)
	if _, err := plain.Exec(`CREATE TABLE observations (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
		session_id TEXT, project TEXT, type TEXT, title TEXT, narrative TEXT, facts TEXT, files_modified TEXT, created_at INTEGER)`); err != nil {
		b.Fatal(err)
	}
	seq := 0
	mkBatch := func() *store.Batch {
		bt := &store.Batch{}
		for range batch {
			seq++
			bt.Observations = append(bt.Observations, benchObservation(seq))
		}
		return bt
	}
	run := func(f func()) time.Duration {
		start := time.Now()
		for i := 0; i < b.N; i++ {
			f()
		}
		return time.Since(start)
	}
	b.ResetTimer()
	tOps := run(func() {
		if _, err := withOps.Commit(ctx, mkBatch()); err != nil {
			b.Fatal(err)
		}
	})
	tNoOps := run(func() {
		if _, err := withoutOps.Commit(ctx, mkBatch()); err != nil {
			b.Fatal(err)
		}
	})
	tPlain := run(func() {
		tx, err := plain.Begin()
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range mkBatch().Observations {
			seq++
			if _, err := tx.Exec(`INSERT INTO observations(id, session_id, project, type, title, narrative, facts, files_modified, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, fmt.Sprint("id", seq), o.SessionID, o.Project, o.Type, o.Title, o.Narrative,
				fmt.Sprint(o.Facts), fmt.Sprint(o.FilesModified), o.CreatedAt); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(tOps)/float64(tNoOps), "oplog-vs-localonly-x")
	b.ReportMetric(float64(tOps)/float64(tPlain), "oplog-vs-plain-insert-x")
	b.ReportMetric(float64(tOps.Microseconds())/float64(b.N*batch), "µs/obs-with-oplog")
}

// BenchmarkCatchUp: a new device joins a device whose history is 5,000 observations, 5,000
// session updates (50 sessions) and 500 forgets, and pulls it all — first from the op-log as
// written ("oplog"), then, once compacted, from the compacted op-log ("compacted": the
// superseded session ops and the forgotten observations' ops travel as placeholders), then
// from a snapshot of the compacted state ("snapshot": rows and op-log installed in one
// transaction, with the default SnapshotMin).
// Reports the catch-up rate in ops (seqs the new device's vector moved past) and records
// (observations it ends with) per second, and the CPU time of the whole process per 1k ops.
func BenchmarkCatchUp(b *testing.B) {
	a := startNode(b, "dev-a", testkit.FastTempDir(b), nil, func(c *nodeSetup) { c.CompactInterval = -1 })
	a.history(5_000, 5_000, 500)
	origin := a.id.String()
	total := a.vv()[origin]
	var records, forgets int
	if err := a.rep.ReadDB().QueryRow("SELECT (SELECT COUNT(*) FROM observations), (SELECT COUNT(*) FROM ops WHERE kind = 'forget')").Scan(&records, &forgets); err != nil {
		b.Fatal(err)
	}
	b.Logf("A holds %d ops of its own, %d observations, %d forgets", total, records, forgets)
	catchUp := func(b *testing.B, name string, snapshot nodeOpt) {
		var elapsed, cpu time.Duration
		for i := 0; i < b.N; i++ {
			nb := startNode(b, fmt.Sprintf("%s-%d", name, i), testkit.FastTempDir(b), nil, snapshot, func(c *nodeSetup) { c.AntiEntropyInterval = time.Hour })
			before := cpuTime()
			start := time.Now()
			nb.join(a)
			waitFor(b, 5*time.Minute, "the new device to catch up", func() (bool, string) {
				got := nb.vv()[origin]
				return got >= total, fmt.Sprint(got, " of ", total)
			})
			elapsed += time.Since(start)
			cpu += cpuTime() - before
			if name == "snapshot" { // counted just after the install committed
				waitFor(b, 10*time.Second, "the snapshot to be counted", func() (bool, string) {
					got := nb.node.stats.SnapshotsInstalled.Load()
					return got == 1, fmt.Sprint(got, " snapshots")
				})
			} else if got := nb.node.stats.SnapshotsInstalled.Load(); got != 0 {
				b.Fatalf("%s: the new device installed %d snapshots", name, got)
			}
			// A compacts only what every member holds: the new device says so in the Hello
			// of A's next anti-entropy round.
			waitFor(b, time.Minute, "A to know the new device holds its history", func() (bool, string) {
				floor, err := a.node.compactFloor(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				return floor[origin] >= total, fmt.Sprint(floor)
			})
			nb.stop()
		}
		b.ReportMetric(float64(total)*float64(b.N)/elapsed.Seconds(), "ops/s")
		b.ReportMetric(float64(records)*float64(b.N)/elapsed.Seconds(), "records/s")
		b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N)/(float64(total)/1000), "cpu-ms/1k-ops")
	}
	b.Run("oplog", func(b *testing.B) { catchUp(b, "oplog", snapshotsOff) })
	res, err := a.node.Compact(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("compacted %d of %d ops of A", res.Removed(), total)
	b.Run("compacted", func(b *testing.B) { catchUp(b, "compacted", snapshotsOff) })
	b.Run("snapshot", func(b *testing.B) { catchUp(b, "snapshot", func(*nodeSetup) {}) })
}

// cpuTime is the CPU time (user + system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

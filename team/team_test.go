package team

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/store"
)

func users() []rqlitetest.User {
	member := []string{"execute", "query", "status"}
	return []rqlitetest.User{
		{Username: "alice", Password: testPassword, Perms: member},
		{Username: "bob", Password: testPassword, Perms: member},
		{Username: "carol", Password: testPassword, Perms: member},
		{Username: "mallory", Password: testPassword, Perms: member},
		{Username: "reader", Password: testPassword, Perms: []string{"query"}},
	}
}

// TestTeamOnThreeNodeCluster runs the "done when" list against one real 3-node
// rqlite cluster (rqlited processes on 127.0.0.1), its subtests in order.
func TestTeamOnThreeNodeCluster(t *testing.T) {
	testkit.LeakCheck(t) // every member's loop ends with its Close
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 3, Users: users()})
	ctx := context.Background()
	a := newMember(t, "alice", "laptop")
	b := newMember(t, "bob", "desktop")
	const P = "billing-api"

	t.Run("wrong password and missing permission are clear errors", func(t *testing.T) {
		m := newMember(t, "alice", "x")
		_, err := m.t.Join(ctx, JoinRequest{URLs: c.URLs(), User: "alice", Password: "wrong-password", Name: "acme"})
		if !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("wrong password: %v, want ErrUnauthorized", err)
		}
		if strings.Contains(err.Error(), "wrong-password") {
			t.Fatalf("error shows the password: %v", err)
		}
		r := newMember(t, "reader", "x")
		_, err = r.t.Join(ctx, JoinRequest{URLs: c.URLs(), User: "reader", Password: testPassword, Name: "acme"})
		if !errors.Is(err, ErrForbidden) {
			t.Fatalf("query-only user: %v, want ErrForbidden", err)
		}
		_, err = m.t.Join(ctx, JoinRequest{URLs: []string{"http://127.0.0.1:1"}, User: "alice", Password: testPassword, Name: "acme"})
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("no cluster: %v, want ErrUnreachable", err)
		}
	})

	t.Run("join founds the team once and counts members", func(t *testing.T) {
		info := a.join(t, c, P)
		if info.Name != "acme" || !info.Founded || info.Members != 1 || info.Leader == "" {
			t.Fatalf("first join: %+v", info)
		}
		info = b.join(t, c, P)
		if info.Founded || info.Members != 2 {
			t.Fatalf("second join: %+v", info)
		}
		a.t.Start(ctx)
		b.t.Start(ctx)
	})

	t.Run("A to B and B to A", func(t *testing.T) {
		a.record(t, P, "idempotency keys on invoice retries")
		testkit.WaitFor(t, "A's record on B", 30*time.Second, func() bool { return b.has(t, "idempotency keys on invoice retries") })
		b.record(t, P, "gradle daemon must be stopped before the build")
		testkit.WaitFor(t, "B's record on A", 30*time.Second, func() bool { return a.has(t, "gradle daemon must be stopped before the build") })
		names, err := b.r.DeviceNames(ctx)
		if err != nil || names[a.r.Origin()] != "@alice/laptop" {
			t.Fatalf("B names A's device %q (%v), want @alice/laptop", names[a.r.Origin()], err)
		}
	})

	t.Run("requests go to the known leader first", func(t *testing.T) {
		leader := c.WaitLeader(t, 30*time.Second)
		var urls []string // the leader last: a client that knows nothing asks it last
		for _, n := range c.Nodes {
			if n != leader {
				urls = append(urls, n.URL())
			}
		}
		urls = append(urls, leader.URL())
		rq := newRQ(urls, "alice", testPassword, 3*time.Second)
		if id, _ := a.t.leader(ctx, rq); id != leader.ID {
			t.Fatalf("leader %q, want %s", id, leader.ID)
		}
		rq.mu.Lock()
		first := rq.urls[rq.good]
		rq.mu.Unlock()
		if first != leader.URL() {
			t.Fatalf("first URL asked after status: %s, want the leader's %s", first, leader.URL())
		}
	})

	t.Run("search --team finds records with their author", func(t *testing.T) {
		hits, err := b.t.Search(ctx, "invoice retries", "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].Author != "alice/laptop" || hits[0].Project != P {
			t.Fatalf("hits: %+v", hits)
		}
	})

	t.Run("unshared and local-only projects never reach the cluster", func(t *testing.T) {
		lo := newMember(t, "carol", "x", "secret-vault")
		lo.join(t, c)
		if err := lo.t.Share(ctx, "secret-vault"); !errors.Is(err, ErrLocalOnly) {
			t.Fatalf("share of a local-only project: %v, want ErrLocalOnly", err)
		}
		a.record(t, "side-project", "UNSHARED-MARKER-7f3a")
		a.record(t, P, "sentinel after the marker")
		testkit.WaitFor(t, "sentinel on B", 30*time.Second, func() bool { return b.has(t, "sentinel after the marker") })
		for _, n := range c.Nodes {
			if hits := testkit.FilesContaining(t, filepath.Dir(n.Dir), "UNSHARED-MARKER-7f3a"); len(hits) > 0 {
				t.Fatalf("unshared record reached rqlite node %s: %v", n.ID, hits)
			}
		}
		if b.has(t, "UNSHARED-MARKER-7f3a") {
			t.Fatal("unshared record reached B")
		}
	})

	t.Run("forged ops are rejected by every member and reported", func(t *testing.T) {
		victim := a.record(t, P, "record mallory wants gone")
		testkit.WaitFor(t, "victim on B", 30*time.Second, func() bool { return b.has(t, "record mallory wants gone") })
		m := newMember(t, "mallory", "evil")
		m.join(t, c, P)
		admin := newRQ(c.URLs(), rqlitetest.Admin, c.AdminPassword, 3*time.Second)
		// 1. an op under alice's device, signed with mallory's key.
		forged := Op{Origin: a.r.Origin(), TSeq: 1000, Project: P, Kind: store.OpObservation, RecordID: "01FORGEDFORGEDFORGEDFORGED",
			HLC: 1, Payload: []byte(`{"id":"01FORGEDFORGEDFORGEDFORGED","session_id":"s","project":"billing-api","type":"decision","title":"FORGED-BY-MALLORY","created_at":1}`),
			Author: "alice/laptop"}
		if err := sign(m.key, &forged); err != nil {
			t.Fatal(err)
		}
		// 2. a tombstone for alice's record, validly signed by mallory, who is no admin.
		tomb := Op{Origin: m.r.Origin(), TSeq: 1, Project: P, Kind: store.OpForget, RecordID: victim, HLC: 2,
			Payload: []byte(`{"v":1,"id":"` + victim + `"}`), Author: "mallory/evil"}
		if err := sign(m.key, &tomb); err != nil {
			t.Fatal(err)
		}
		var batch []stmt
		for _, op := range []Op{forged, tomb} {
			batch = append(batch, pushStatements([]Op{op})[0]) // the op row only: no purge on the cluster
		}
		if _, err := admin.execute(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, mem := range []*member{a, b} {
			testkit.WaitForState(t, "both forgeries rejected", 3*time.Second, func() (bool, string) {
				st, err := mem.t.Status(ctx)
				return err == nil && st.Rejected >= 2, fmt.Sprintf("%+v %v", st, err)
			})
		}
		if !b.has(t, "record mallory wants gone") || !a.has(t, "record mallory wants gone") {
			t.Fatal("a forged tombstone removed alice's record")
		}
		if b.has(t, "FORGED-BY-MALLORY") {
			t.Fatal("an op with a forged signature was applied")
		}
	})

	t.Run("forget by the author purges the cluster and every member", func(t *testing.T) {
		id := a.record(t, P, "FORGET-ME-4411 leaked a hostname")
		testkit.WaitFor(t, "record on B", 30*time.Second, func() bool { return b.has(t, "FORGET-ME-4411 leaked a hostname") })
		if _, err := a.r.Forget(ctx, []string{id}); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, "forget reaches B", 30*time.Second, func() bool { return !b.has(t, "FORGET-ME-4411 leaked a hostname") })
		hits, err := b.t.Search(ctx, "FORGET-ME-4411", "", 10)
		if err != nil || len(hits) != 0 {
			t.Fatalf("forgotten record still searchable on the cluster: %v %v", hits, err)
		}
		admin := newRQ(c.URLs(), rqlitetest.Admin, c.AdminPassword, 3*time.Second)
		res, err := admin.query(ctx, levelWeak, []stmt{st(`SELECT COUNT(*) FROM team_ops WHERE payload LIKE '%FORGET-ME-4411%'`)})
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := intOf(res[0].Values[0][0]); n != 0 {
			t.Fatalf("%d ops on the cluster still hold the forgotten content", n)
		}
	})

	t.Run("cluster down: A records, its backlog arrives on B exactly once", func(t *testing.T) {
		for _, n := range c.Nodes {
			n.Kill(t)
		}
		var titles []string
		for i := 0; i < 20; i++ {
			titles = append(titles, fmt.Sprintf("offline change %d", i))
			a.record(t, P, titles[i])
		}
		testkit.WaitForState(t, "backlog while the cluster is down", 5*time.Second, func() (bool, string) {
			st, _ := a.t.Status(ctx)
			return st.PushBacklog >= 20 && !st.Reachable && st.LastError != "", fmt.Sprintf("%+v", st)
		})
		for _, n := range c.Nodes {
			n.Restart(t)
		}
		c.WaitLeader(t, 30*time.Second)
		testkit.WaitFor(t, "backlog on B", 30*time.Second, func() bool { return b.has(t, titles[19]) })
		for _, title := range titles {
			var n int
			if err := b.r.ReadDB().QueryRow(`SELECT COUNT(*) FROM observations WHERE title = ?`, title).Scan(&n); err != nil || n != 1 {
				t.Fatalf("%q stored %d times on B (%v)", title, n, err)
			}
		}
		admin := newRQ(c.URLs(), rqlitetest.Admin, c.AdminPassword, 3*time.Second)
		res, err := admin.query(ctx, levelWeak, []stmt{st(`SELECT COUNT(*), COUNT(DISTINCT record_id) FROM team_ops WHERE origin = ? AND kind = 'observation'`, a.r.Origin())})
		if err != nil {
			t.Fatal(err)
		}
		all, _ := intOf(res[0].Values[0][0])
		distinct, _ := intOf(res[0].Values[0][1])
		if all != distinct {
			t.Fatalf("cluster holds %d observation ops of A for %d records", all, distinct)
		}
	})

	t.Run("kill -9 the leader: pushes continue, nothing lost, equal exports", func(t *testing.T) {
		leader := c.WaitLeader(t, 30*time.Second)
		for i := 0; i < 40; i++ {
			if i == 10 {
				leader.Kill(t)
			}
			a.record(t, P, fmt.Sprintf("during failover %d", i))
			if i%3 == 0 {
				b.record(t, P, fmt.Sprintf("b during failover %d", i))
			}
		}
		c.WaitLeader(t, 30*time.Second)
		testkit.WaitForState(t, "equal exports of P", 15*time.Second, func() (bool, string) {
			ea, eb := a.export(t, P), b.export(t, P)
			return ea == eb && a.count(t, P) == b.count(t, P), fmt.Sprintf("A %d, B %d observations", a.count(t, P), b.count(t, P))
		})
		for i := 0; i < 40; i++ {
			if !b.has(t, fmt.Sprintf("during failover %d", i)) {
				t.Fatalf("record %d lost", i)
			}
		}
		leader.Restart(t)
	})

	t.Run("a late member catches up on 10,000 records with progress", func(t *testing.T) {
		const n = 10000
		b.t.Close() // B's loop would only slow the machine down from here
		start := time.Now()
		for i := 0; i < n; i += 500 {
			batch := &store.Batch{}
			for j := i; j < i+500; j++ {
				batch.Observations = append(batch.Observations, obs(P, fmt.Sprintf("bulk %d", j), j))
			}
			if _, err := a.r.Commit(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		testkit.WaitForState(t, "A's bulk pushed", 60*time.Second, func() (bool, string) {
			st, _ := a.t.Status(ctx)
			return st.PushBacklog == 0 && st.Reachable, fmt.Sprintf("%+v", st)
		})
		pushed := time.Since(start)
		late := newMember(t, "carol", "late")
		late.join(t, c, P)
		var calls []Progress
		start = time.Now()
		got, err := late.t.Pull(ctx, func(p Progress) { calls = append(calls, p) })
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		if c := late.count(t, P); c < n {
			t.Fatalf("late member holds %d observations of P, want ≥ %d", c, n)
		}
		if len(calls) < 2 || calls[len(calls)-1].Left != 0 || calls[0].Left == 0 {
			t.Fatalf("progress: %d reports, first %+v, last %+v", len(calls), calls[0], calls[len(calls)-1])
		}
		t.Logf("push %d records: %s (%.0f records/s); catch-up %d ops: %s (%.0f ops/s)", n, pushed, float64(n)/pushed.Seconds(), got, took, float64(got)/took.Seconds())
	})

	t.Run("a cluster schema newer than this memnode is refused", func(t *testing.T) {
		admin := newRQ(c.URLs(), rqlitetest.Admin, c.AdminPassword, 3*time.Second)
		if _, err := admin.execute(ctx, []stmt{st(`INSERT INTO team_schema(version, applied_at) VALUES (?, 0)`, SchemaVersion+1)}); err != nil {
			t.Fatal(err)
		}
		m := newMember(t, "bob", "new")
		_, err := m.t.Join(ctx, JoinRequest{URLs: c.URLs(), User: "bob", Password: testPassword, Name: "acme"})
		if !errors.Is(err, ErrSchemaNewer) {
			t.Fatalf("join: %v, want ErrSchemaNewer", err)
		}
	})
}

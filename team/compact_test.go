package team

import (
	"context"
	"fmt"
	"testing"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
)

// TestTeamSessionStateSurvivesCompactionBeforeTheScan: A's op-log is compacted before its
// team scan reads it (replica.Compact with A's own vector as the floor: a device-sync group
// that already holds everything), so a superseded session op of A's reaches the scan as a
// "compacted" placeholder and is never queued. The ops compaction keeps — the register's
// winner and the op carrying its earliest started_at — are A's own and are queued, so B ends
// with A's session state (team/DESIGN.md, "Compaction").
func TestTeamSessionStateSurvivesCompactionBeforeTheScan(t *testing.T) {
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	a := newMember(t, "alice", "laptop")
	b := newMember(t, "bob", "desktop")
	a.join(t, c)
	b.join(t, c)
	const t0 = int64(1790000000000)
	for _, tc := range []struct {
		name     string
		writes   []memory.Session // committed in order: each is one session op of A's
		removed  int              // ops compaction removes
		started  int64
		ended    int64
		finished string
	}{
		{"the winner carries the start", []memory.Session{
			{StartedAt: t0, Status: "active"},
			{StartedAt: t0, Status: "completed", EndedAt: t0 + 5000},
		}, 1, t0, t0 + 5000, "completed"},
		{"an older op carries the start", []memory.Session{
			{StartedAt: t0, Status: "active"},
			{StartedAt: t0 + 100, Status: "active"},
			{StartedAt: t0 + 200, Status: "completed", EndedAt: t0 + 9000},
		}, 1, t0, t0 + 9000, "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			project := fmt.Sprintf("compact-%d", len(tc.writes))
			sid := "sess-" + project
			for _, s := range tc.writes {
				s.ID, s.Project = sid, project
				if _, err := a.r.Commit(ctx, &store.Batch{Sessions: []memory.Session{s}}); err != nil {
					t.Fatal(err)
				}
			}
			vv, err := a.r.VersionVector(ctx)
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.r.Compact(ctx, store.VersionVector{a.r.Origin(): vv[a.r.Origin()]})
			if err != nil || res.Superseded != tc.removed {
				t.Fatalf("compact: %+v %v, want %d superseded", res, err, tc.removed)
			}
			ops, err := a.r.OpsSince(ctx, a.r.Origin(), 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			compacted := 0
			for _, op := range ops {
				if op.Kind == store.OpCompacted {
					compacted++
				}
			}
			if compacted < tc.removed {
				t.Fatalf("the scan would see %d compacted placeholders, want ≥ %d", compacted, tc.removed)
			}

			// Sharing rescans A's op-log from the start: the placeholders are skipped.
			if err := a.t.Share(ctx, project); err != nil {
				t.Fatal(err)
			}
			if err := b.t.Share(ctx, project); err != nil {
				t.Fatal(err)
			}
			if err := a.t.Push(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := b.t.Pull(ctx, nil); err != nil {
				t.Fatal(err)
			}
			want := session(t, a, sid)
			if want.StartedAt != tc.started || want.EndedAt != tc.ended || want.Status != tc.finished {
				t.Fatalf("A's own session after compaction: %+v", want)
			}
			if got := session(t, b, sid); got != want {
				t.Errorf("B's session\n got %+v\nwant %+v (A's)", got, want)
			}
			if ea, eb := a.export(t, project), b.export(t, project); ea != eb {
				t.Errorf("exports differ:\nA: %s\nB: %s", ea, eb)
			}
		})
	}
}

// session reads the replicated fields of a session row.
func session(tb testing.TB, m *member, id string) memory.Session {
	tb.Helper()
	var s memory.Session
	var ended *int64
	err := m.r.ReadDB().QueryRow(`SELECT id, project, platform, started_at, ended_at, status, origin, hlc FROM sessions WHERE id = ?`, id).
		Scan(&s.ID, &s.Project, &s.Platform, &s.StartedAt, &ended, &s.Status, &s.Origin, &s.HLC)
	if err != nil {
		tb.Fatalf("session %s on %s: %v", id, m.user, err)
	}
	if ended != nil {
		s.EndedAt = *ended
	}
	return s
}

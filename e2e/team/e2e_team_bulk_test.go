package team

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/store"
	"github.com/memnode/memnode/team"
)

// TestTeamJoinThenShareAt30000Observations replays the README's sequence on a device with
// a large history, real binaries on a real rqlited: alice's node holds 30,000 observations
// (imported), `team join` is followed at once by `team share`; all 30,000 reach bob, and
// alice's `team status` counts what is left to push truthfully while it drains (never 0
// before the cluster has them all). Slow (minutes on 2 busy cores): not in -short.
func TestTeamJoinThenShareAt30000Observations(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("30,000-observation team share skipped in -short")
	}
	const n, project = 30000, "bulkproj"
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: e2ekit.TeamUsers()})
	urls := strings.Join(c.URLs(), ",")
	proj := filepath.Join(t.TempDir(), project)
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	a, b := e2ekit.NewTeamMember(t, proj), e2ekit.NewTeamMember(t, proj)
	b.Start()
	b.MustRun([]byte(e2ekit.E2eTeamPassword+"\n"), "team", "join", urls, "--user", "bob", "--name", "acme")
	b.MustRun(nil, "team", "share", project)

	at := time.Now().Add(-48 * time.Hour).UnixMilli()
	recs := []importer.Record{
		{Kind: importer.KindHeader, Header: &importer.Header{Format: "memnode-export", Version: 1, ExportedAt: at}},
		{Kind: importer.KindSession, Session: &memory.Session{ID: "bulk-session", Project: project, Platform: "claude-code", StartedAt: at, Status: "completed", Origin: "old-laptop", HLC: uint64(at) << 16}},
	}
	for i := range n {
		ts := at + int64(i)
		ob := &memory.Observation{ID: store.ImportID(ts, fmt.Sprintf("bulk:%d", i)), SessionID: "bulk-session", Project: project,
			Type: "change", Title: fmt.Sprintf("bulk step %d of the ledger migration", i), Narrative: "the ledger moved one table further",
			CreatedAt: ts, Origin: "old-laptop", HLC: uint64(ts) << 16}
		ob.ContentHash = ob.HashContent()
		recs = append(recs, importer.Record{Kind: importer.KindObservation, Observation: ob})
	}
	file := filepath.Join(t.TempDir(), "history.jsonl")
	e2ekit.WriteExport(t, file, recs)
	a.Start()
	start := time.Now()
	a.MustRun(nil, "import", file)
	imported := time.Since(start)

	start = time.Now()
	a.MustRun([]byte(e2ekit.E2eTeamPassword+"\n"), "team", "join", urls, "--user", "alice")
	a.MustRun(nil, "team", "share", project)
	bdb := b.Db()
	var backlogs []int
	got := 0
	e2ekit.Poll(t, "all 30,000 observations on bob", 20*time.Minute, func() bool {
		var st team.Status
		if err := json.Unmarshal([]byte(a.MustRun(nil, "team", "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		got = b.Count(bdb, `SELECT COUNT(*) FROM observations WHERE project = ?`, project)
		if len(backlogs) == 0 || backlogs[len(backlogs)-1] != st.PushBacklog {
			backlogs = append(backlogs, st.PushBacklog)
		}
		if st.PushBacklog == 0 {
			// Nothing left to push: the cluster has every op (it counts the op-log until
			// the scan has looked at all of it).
			if on := clusterCount(t, c, `SELECT COUNT(*) FROM team_ops WHERE project = ? AND kind = 'observation'`, project); on != n {
				t.Fatalf("alice's status says nothing to push, the cluster holds %d of %d observations (backlogs seen %v)", on, n, backlogs)
			}
		}
		return got == n
	})
	shared := time.Since(start)
	if backlogs[0] < n {
		t.Errorf("the first status after the share counted %d ops to push, want ≥ %d", backlogs[0], n)
	}
	t.Logf("import of %d observations: %s; join+share until bob holds all: %s; backlogs seen: %v", n, imported, shared, backlogs)
}

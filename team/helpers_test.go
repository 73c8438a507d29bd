package team

import (
	"bytes"
	"context"
	"fmt"
	"github.com/memnode/memnode/team/statedb"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/memnode/memnode/importer"
	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
	"github.com/memnode/memnode/replica"
	"github.com/memnode/memnode/store"
)

// member is one memnode device in a team test: a real replica file, a real team state file,
// a Team joined to a real rqlite cluster.
type member struct {
	t    *Team
	r    *replica.Replica
	key  crypto.PrivKey
	user string
	n    int
}

const testPassword = "pw-" + "team-test"

func newKey(tb testing.TB) (crypto.PrivKey, string) {
	tb.Helper()
	k, _, err := crypto.GenerateEd25519Key(nil)
	if err != nil {
		tb.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		tb.Fatal(err)
	}
	return k, id.String()
}

// newMember opens a device; join joins it to urls as user and shares projects.
func newMember(tb testing.TB, user, device string, localOnly ...string) *member {
	tb.Helper()
	return newTunedMember(tb, user, device, nil, localOnly...)
}

// newTunedMember is newMember with tune applied to the Team's Config (nil: as is).
func newTunedMember(tb testing.TB, user, device string, tune func(*Config), localOnly ...string) *member {
	tb.Helper()
	key, origin := newKey(tb)
	r, bus := testkit.OpenReplicaWithFeed(tb, origin)
	lo := func(p string) bool {
		for _, l := range localOnly {
			if l == p {
				return true
			}
		}
		return false
	}
	cfg := Config{StatePath: filepath.Join(tb.TempDir(), "team.db"), OpenState: openStateDB, Replica: r, Key: key,
		Device: device, LocalOnly: lo, Feed: bus, Every: 50 * time.Millisecond, Timeout: 3 * time.Second}
	if tune != nil {
		tune(&cfg)
	}
	tm, err := New(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tm.Close() })
	return &member{t: tm, r: r, key: key, user: user}
}

// founders is each test cluster's founding member: join has it admit the members that
// join after it, as its running node would within a second (admitEvery), so that a test
// can push at once. Test-only bookkeeping, emptied by each test's cleanup.
var founders sync.Map // *rqlitetest.Cluster → *member

func (m *member) join(tb testing.TB, c *rqlitetest.Cluster, projects ...string) JoinInfo {
	tb.Helper()
	info, err := m.t.Join(context.Background(), JoinRequest{URLs: c.URLs(), User: m.user, Password: testPassword, Name: "acme", CACert: c.CACert})
	if err != nil {
		tb.Fatalf("join %s: %v", m.user, err)
	}
	if info.Founded {
		founders.Store(c, m)
		tb.Cleanup(func() { founders.Delete(c) })
	} else if f, ok := founders.Load(c); ok {
		if _, err := f.(*member).t.Admit(context.Background()); err != nil {
			tb.Fatalf("admit %s: %v", m.user, err)
		}
	}
	for _, p := range projects {
		if err := m.t.Share(context.Background(), p); err != nil {
			tb.Fatalf("share %s: %v", p, err)
		}
	}
	return info
}

// record commits one observation (with its session) in project and returns its ID.
func (m *member) record(tb testing.TB, project, title string) string {
	tb.Helper()
	m.n++
	sid := fmt.Sprintf("%s-%s-s%d", m.user, project, m.n/100)
	res, err := m.r.Commit(context.Background(), &store.Batch{
		Sessions:     []memory.Session{{ID: sid, Project: project, StartedAt: 1790000000000, Status: "active"}},
		Observations: []memory.Observation{{SessionID: sid, Project: project, Type: "discovery", Title: title, Narrative: "narrative of " + title, CreatedAt: int64(1790000000000 + m.n)}},
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(res.Observations) != 1 {
		tb.Fatalf("commit stored %d observations", len(res.Observations))
	}
	return res.Observations[0].ID
}

// has reports whether the member's replica holds an observation with this title.
func (m *member) has(tb testing.TB, title string) bool {
	tb.Helper()
	var n int
	if err := m.r.ReadDB().QueryRow(`SELECT COUNT(*) FROM observations WHERE title = ?`, title).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n > 0
}

func (m *member) count(tb testing.TB, project string) int {
	tb.Helper()
	var n int
	if err := m.r.ReadDB().QueryRow(`SELECT COUNT(*) FROM observations WHERE project = ?`, project).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// export is the member's export of project, its records: the convergence oracle. Device
// lines are left out: each member names the other members' devices (@user/device), not its
// own, so those labels differ by design.
func (m *member) export(tb testing.TB, project string) string {
	tb.Helper()
	var b bytes.Buffer
	if _, err := importer.Export(context.Background(), m.r, &b, project, time.UnixMilli(1790000000000)); err != nil {
		tb.Fatal(err)
	}
	var keep []string
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.Contains(line, `"kind":"`+importer.KindDevice+`"`) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func obs(project, title string, i int) memory.Observation {
	return memory.Observation{SessionID: "bulk-" + project, Project: project, Type: "change", Title: title,
		Narrative: "bulk narrative " + title, CreatedAt: int64(1790000000000 + i)}
}

// openStateDB is what node wires: team's state in a real SQLite file.
func openStateDB(ctx context.Context, path string) (StateDB, error) { return statedb.Open(ctx, path) }

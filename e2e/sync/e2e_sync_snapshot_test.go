package sync

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"
)

// TestSyncSnapshotResumesAfterKill9: a new device C joins A, which holds 20,000 imported
// observations, and starts from a snapshot (issues 12 and 29), which it installs chunk by
// chunk. A is held after a few chunks by the e2e binary's snapshot gate (node/e2egate_e2e.go),
// and C is killed with SIGKILL there — the link cut midway. Its database then holds the
// chunks it committed and where to resume, but a vector that claims nothing of A's ops.
// Restarted, with the gate open, it resumes after those rows (it says so, with the count)
// instead of starting again, and ends with an export equal to A's.
func TestSyncSnapshotResumesAfterKill9(t *testing.T) {
	t.Parallel()
	const total = 20_000
	ports := e2ekit.SyncPorts{}
	a, c := e2ekit.NewSyncNode(t, "dev-a", ports), e2ekit.NewSyncNode(t, "dev-c", ports)
	gate := filepath.Join(t.TempDir(), "hold-the-snapshot")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a.Extra = append(a.Extra, "MEMNODE_E2E_SNAPSHOT_GATE="+gate, "MEMNODE_E2E_SNAPSHOT_GATE_AFTER=4")
	clog := filepath.Join(c.DataDir, "logs", "memnode.log")
	logsOnFailure(t, a, c)
	a.StartSync(t)
	importHistory(t, a, total, "01M8SA", "snapshot record %d", "what the new device must install whole, however often it is cut")
	adb := a.Rodb()
	defer adb.Close()
	if n := a.Count(adb, "SELECT COUNT(*) FROM observations"); n != total {
		t.Fatalf("A holds %d observations after the import, want %d", n, total)
	}
	a.Origin = a.Peers().Devices[0].PeerID

	c.StartSync(t)
	if out := c.MustRun(nil, "peers", "join", a.Invite("2m")); !strings.Contains(out, "Joined") {
		t.Fatalf("join: %s", out)
	}
	var held int64
	e2ekit.Poll(t, "C to install the chunks A lets through", 60*time.Second, func() bool {
		st := c.Peers()
		if st.Snapshot != nil {
			held = st.Snapshot.Rows
		}
		return held > 0
	})
	c.Kill()
	cdb := c.Rodb()
	n := c.Count(cdb, "SELECT COUNT(*) FROM observations")
	if n == 0 || n >= total {
		t.Fatalf("C killed mid-snapshot holds %d observations, want the chunks it committed (some of %d)", n, total)
	}
	if n := c.Count(cdb, "SELECT COALESCE(MAX(seq), 0) FROM version_vector WHERE origin = ?", a.Origin); n != 0 {
		t.Fatalf("C killed mid-snapshot has a vector claiming %d of A's ops", n)
	}
	cdb.Close()

	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	c.Start()
	e2ekit.Poll(t, "C to hold A's history after its restart", 2*time.Minute, func() bool {
		db := c.Rodb()
		defer db.Close()
		return c.Count(db, "SELECT COUNT(*) FROM observations") == total
	})
	e2ekit.Poll(t, "C to say it resumed the snapshot and finished it", 30*time.Second, func() bool {
		b, _ := os.ReadFile(clog)
		return regexp.MustCompile(`resuming a snapshot.*rows=[1-9]`).Match(b) && strings.Contains(string(b), "started from a snapshot")
	})
	cdb = c.Rodb()
	want := a.Count(adb, "SELECT seq FROM version_vector WHERE origin = ?", a.Origin)
	if got := c.Count(cdb, "SELECT seq FROM version_vector WHERE origin = ?", a.Origin); got != want {
		t.Fatalf("C's vector holds %d of A's ops, A has %d", got, want)
	}
	if got := c.Count(cdb, "SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH 'snapshot AND record AND 12345'"); got != 1 {
		t.Fatalf("C's search finds %d copies of a snapshot record, want 1", got)
	}
	// Both export the same memory (the header's time aside) once C's device name reached A.
	export := func(n *e2ekit.SyncNode) string {
		out := filepath.Join(t.TempDir(), n.Name+".jsonl")
		n.MustRun(nil, "export", "--out", out)
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		_, body, _ := strings.Cut(string(b), "\n")
		return body
	}
	var ea, ec string
	e2ekit.Poll(t, "A's and C's exports to be equal", 60*time.Second, func() bool {
		ea, ec = export(a), export(c)
		return ea == ec
	})
	if strings.Count(ec, `"kind":"observation"`) != total {
		t.Fatalf("C's export holds %d observations, want %d", strings.Count(ec, `"kind":"observation"`), total)
	}
}

// logsOnFailure has a failing test print the tail of each node's log.
func logsOnFailure(t *testing.T, nodes ...*e2ekit.SyncNode) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range nodes {
				logs, _ := os.ReadFile(filepath.Join(n.DataDir, "logs", "memnode.log"))
				t.Logf("---- %s log:\n%s", n.Name, e2ekit.Tail(string(logs), 6000))
			}
		}
	})
}

// importHistory imports total observations into the running n with `memnode import`: IDs
// idPrefix and a 20-digit number, 100 per session, titles from the format title (given the
// number) and the narrative text with the number appended.
func importHistory(t *testing.T, n *e2ekit.SyncNode, total int, idPrefix, title, narrative string) {
	t.Helper()
	var lines strings.Builder
	for i := range total {
		fmt.Fprintf(&lines, `{"kind":"observation","observation":{"id":"%s%020d","session_id":"%s-%d","project":"%sproj","type":"discovery","title":%q,"narrative":"%s, number %d","created_at":%d}}`+"\n",
			idPrefix, i, idPrefix, i/100, idPrefix, fmt.Sprintf(title, i), narrative, i, 1_700_000_000_000+int64(i))
	}
	file := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(file, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	n.MustRun(nil, "import", "--quiet", file)
}

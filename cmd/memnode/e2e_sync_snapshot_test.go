package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSyncSnapshotSurvivesKill9: a new device C joins A, which holds 20,000 imported
// observations, and starts from a snapshot (issue 12). C is killed with SIGKILL in the
// middle of installing it: its database then holds nothing of A — no record, no vector entry
// claiming A's ops — and once restarted it installs the snapshot whole and holds exactly
// A's records.
func TestSyncSnapshotSurvivesKill9(t *testing.T) {
	const total = 20_000
	ports := syncPorts{}
	a, c := newSyncNode(t, "dev-a", ports), newSyncNode(t, "dev-c", ports)
	clog := filepath.Join(c.dataDir, "logs", "memnode.log")
	logsOnFailure(t, a, c)
	a.startSync(t)
	importHistory(t, a, total, "01M8SA", "snapshot record %d", "what the new device must install whole or not at all")
	adb := a.rodb()
	defer adb.Close()
	if n := a.count(adb, "SELECT COUNT(*) FROM observations"); n != total {
		t.Fatalf("A holds %d observations after the import, want %d", n, total)
	}
	a.origin = a.peers().Devices[0].PeerID

	c.startSync(t)
	if out := c.mustRun(nil, "peers", "join", a.invite("2m")); !strings.Contains(out, "Joined") {
		t.Fatalf("join: %s", out)
	}
	poll(t, "C to begin installing A's snapshot", 60*time.Second, func() bool {
		b, _ := os.ReadFile(clog)
		return strings.Contains(string(b), "catching up from a snapshot")
	})
	c.kill()
	cdb := c.rodb()
	n := c.count(cdb, "SELECT COUNT(*) FROM observations")
	if n == total {
		t.Skip("the snapshot was installed before the kill landed: nothing was cut (machine too fast for this history)")
	}
	if n != 0 {
		t.Fatalf("C killed mid-snapshot holds %d observations, want 0 (all or nothing)", n)
	}
	if n := c.count(cdb, "SELECT COALESCE(MAX(seq), 0) FROM version_vector WHERE origin = ?", a.origin); n != 0 {
		t.Fatalf("C killed mid-snapshot has a vector claiming %d of A's ops", n)
	}
	cdb.Close()

	c.start()
	poll(t, "C to hold A's history after its restart", 2*time.Minute, func() bool {
		db := c.rodb()
		defer db.Close()
		return c.count(db, "SELECT COUNT(*) FROM observations") == total
	})
	// Logged just after the install committed; op replay would never log it.
	poll(t, "C to say it started from a snapshot", 10*time.Second, func() bool {
		b, _ := os.ReadFile(clog)
		return strings.Contains(string(b), "started from a snapshot")
	})
	cdb = c.rodb()
	want := a.count(adb, "SELECT seq FROM version_vector WHERE origin = ?", a.origin)
	if got := c.count(cdb, "SELECT seq FROM version_vector WHERE origin = ?", a.origin); got != want {
		t.Fatalf("C's vector holds %d of A's ops, A has %d", got, want)
	}
	if got := c.count(cdb, "SELECT COUNT(*) FROM observations_fts WHERE observations_fts MATCH 'snapshot AND record AND 12345'"); got != 1 {
		t.Fatalf("C's search finds %d copies of a snapshot record, want 1", got)
	}
}

// logsOnFailure has a failing test print the tail of each node's log.
func logsOnFailure(t *testing.T, nodes ...*syncNode) {
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range nodes {
				logs, _ := os.ReadFile(filepath.Join(n.dataDir, "logs", "memnode.log"))
				t.Logf("---- %s log:\n%s", n.name, tail(string(logs), 6000))
			}
		}
	})
}

// importHistory imports total observations into the running n with `memnode import`: IDs
// idPrefix and a 20-digit number, 100 per session, titles from the format title (given the
// number) and the narrative text with the number appended.
func importHistory(t *testing.T, n *syncNode, total int, idPrefix, title, narrative string) {
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
	n.mustRun(nil, "import", "--quiet", file)
}

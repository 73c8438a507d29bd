package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	memsync "github.com/memnode/memnode/sync"
)

// recordsLike counts n's observations written by origin whose title contains s.
func (n *syncNode) recordsLike(origin, s string) int {
	n.tb.Helper()
	db := n.rodb()
	defer db.Close()
	return n.count(db, "SELECT COUNT(*) FROM observations WHERE origin = ? AND instr(title, ?) > 0", origin, s)
}

// TestSyncRemovalIsFinal is issue 12's second defect, in its deterministic variant: B is
// offline, A removes C, C (not yet aware) writes 30 records, B comes back and reaches C first
// (A is down), then A comes back. A and B must end with none of C's post-removal records, and
// C must learn (and say in status) that it was removed; `peers leave` then gives C a group
// of its own.
func TestSyncRemovalIsFinal(t *testing.T) {
	if testing.Short() {
		t.Skip("three-node sync test skipped in -short")
	}
	ports := syncPorts{}
	a, b, c := newSyncNode(t, "dev-a", ports), newSyncNode(t, "dev-b", ports), newSyncNode(t, "dev-c", ports)
	nodes := []*syncNode{a, b, c}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range nodes {
				logs, _ := os.ReadFile(filepath.Join(n.dataDir, "logs", "memnode.log"))
				t.Logf("---- %s log:\n%s", n.name, tail(string(logs), 5000))
			}
		}
	})
	cli := searchCLI(a.instance)
	for _, n := range nodes {
		n.startSync(t)
		n.origin = n.peers().Devices[0].PeerID
	}
	for _, joiner := range []*syncNode{b, c} {
		if out := joiner.mustRun(nil, "peers", "join", a.invite("2m")); !strings.Contains(out, "Joined") {
			t.Fatalf("%s: join: %s", joiner.name, out)
		}
	}
	c.write("beforeremovalcharlie")
	for _, n := range []*syncNode{a, b} {
		poll(t, n.name+" to hold C's record from before the removal", 30*time.Second, func() bool {
			return len(n.find(cli, "beforeremovalcharlie")) > 0
		})
	}

	b.mustRun(nil, "stop")
	if out := a.mustRun(nil, "peers", "remove", "dev-c"); !strings.Contains(out, "Removed dev-c") {
		t.Fatalf("remove: %s", out)
	}
	a.mustRun(nil, "stop")
	for i := range 30 {
		c.write(fmt.Sprintf("afterremoval%02d", i))
	}
	poll(t, "C to hold its 30 records", 30*time.Second, func() bool { return c.recordsLike(c.origin, "afterremoval") == 30 })

	// B returns and reaches C first: it does not know about the removal yet.
	b.startSync(t)
	poll(t, "B to pull C's 30 post-removal records (B does not know yet)", 30*time.Second, func() bool {
		return b.recordsLike(c.origin, "afterremoval") == 30
	})
	// A returns; B learns the removal from A and drops what C wrote after it.
	a.startSync(t)
	poll(t, "B to learn the removal", 30*time.Second, func() bool { return slices.Contains(b.peers().Removed, c.origin) })
	poll(t, "B to drop C's post-removal records", 10*time.Second, func() bool { return b.recordsLike(c.origin, "afterremoval") == 0 })
	// A later write of B reaching A proves the A–B sessions ran after B learned.
	b.write("afterlearningbravo")
	poll(t, "A to get B's later write", 30*time.Second, func() bool { return len(a.find(cli, "afterlearningbravo")) > 0 })
	for _, n := range []*syncNode{a, b} {
		if k := n.recordsLike(c.origin, "afterremoval"); k != 0 {
			t.Errorf("%s holds %d of C's post-removal records", n.name, k)
		}
		if k := n.recordsLike(c.origin, "beforeremovalcharlie"); k != 1 {
			t.Errorf("%s holds %d of C's record from before the removal, want 1", n.name, k)
		}
	}

	// C is told when it reaches a member, and says so.
	c.write("toldcharlie") // a local write makes C try the members now
	poll(t, "C's status to say it was removed", 60*time.Second, func() bool { return c.peers().RemovedBy != "" })
	if out := c.mustRun(nil, "status"); !strings.Contains(out, "removed from its group") {
		t.Errorf("C's status does not say it was removed:\n%s", out)
	}
	if out := c.mustRun(nil, "peers"); !strings.Contains(out, "was removed from its group") {
		t.Errorf("C's peers does not say it was removed:\n%s", out)
	}
	if out := c.mustRun(nil, "peers", "leave"); !strings.Contains(out, "Left the group") {
		t.Fatalf("leave: %s", out)
	}
	st := c.peers()
	if st.RemovedBy != "" || len(st.Devices) != 1 || !st.Devices[0].Self || st.Devices[0].State != memsync.StateAlive {
		t.Fatalf("C after leaving: %+v", st)
	}
	if k := c.recordsLike(c.origin, "afterremoval"); k != 30 {
		t.Errorf("C kept %d of its own 30 records after leaving, want 30", k)
	}
}

package sync

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	memsync "github.com/memnode/memnode/sync"
)

// TestSyncRemovalIsFinal is issue 12's second defect, in its deterministic variant: B is
// offline, A removes C, C (not yet aware) writes 30 records, B comes back and reaches C first
// (A is down), then A comes back. A and B must end with none of C's post-removal records, and
// C must learn (and say in status) that it was removed; `peers leave` then gives C a group
// of its own.
func TestSyncRemovalIsFinal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("three-node sync test skipped in -short")
	}
	ports := e2ekit.SyncPorts{}
	a, b, c := e2ekit.NewSyncNode(t, "dev-a", ports), e2ekit.NewSyncNode(t, "dev-b", ports), e2ekit.NewSyncNode(t, "dev-c", ports)
	nodes := []*e2ekit.SyncNode{a, b, c}
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range nodes {
				logs, _ := os.ReadFile(filepath.Join(n.DataDir, "logs", "memnode.log"))
				t.Logf("---- %s log:\n%s", n.Name, e2ekit.Tail(string(logs), 5000))
			}
		}
	})
	cli := searchCLI(a.Instance)
	for _, n := range nodes {
		n.StartSync(t)
		n.Origin = n.Peers().Devices[0].PeerID
	}
	for _, joiner := range []*e2ekit.SyncNode{b, c} {
		if out := joiner.MustRun(nil, "peers", "join", a.Invite("2m")); !strings.Contains(out, "Joined") {
			t.Fatalf("%s: join: %s", joiner.Name, out)
		}
	}
	c.Write("beforeremovalcharlie")
	for _, n := range []*e2ekit.SyncNode{a, b} {
		e2ekit.Poll(t, n.Name+" to hold C's record from before the removal", 30*time.Second, func() bool {
			return len(n.Find(cli, "beforeremovalcharlie")) > 0
		})
	}

	b.MustRun(nil, "stop")
	if out := a.MustRun(nil, "peers", "remove", "dev-c"); !strings.Contains(out, "Removed dev-c") {
		t.Fatalf("remove: %s", out)
	}
	a.MustRun(nil, "stop")
	for i := range 30 {
		c.Write(fmt.Sprintf("afterremoval%02d", i))
	}
	e2ekit.Poll(t, "C to hold its 30 records", 30*time.Second, func() bool { return c.RecordsLike(c.Origin, "afterremoval") == 30 })

	// B returns and reaches C first: it does not know about the removal yet.
	b.StartSync(t)
	e2ekit.Poll(t, "B to pull C's 30 post-removal records (B does not know yet)", 30*time.Second, func() bool {
		return b.RecordsLike(c.Origin, "afterremoval") == 30
	})
	// A returns; B learns the removal from A and drops what C wrote after it.
	a.StartSync(t)
	e2ekit.Poll(t, "B to learn the removal", 30*time.Second, func() bool { return slices.Contains(b.Peers().Removed, c.Origin) })
	e2ekit.Poll(t, "B to drop C's post-removal records", 10*time.Second, func() bool { return b.RecordsLike(c.Origin, "afterremoval") == 0 })
	// A later write of B reaching A proves the A–B sessions ran after B learned.
	b.Write("afterlearningbravo")
	e2ekit.Poll(t, "A to get B's later write", 30*time.Second, func() bool { return len(a.Find(cli, "afterlearningbravo")) > 0 })
	for _, n := range []*e2ekit.SyncNode{a, b} {
		if k := n.RecordsLike(c.Origin, "afterremoval"); k != 0 {
			t.Errorf("%s holds %d of C's post-removal records", n.Name, k)
		}
		if k := n.RecordsLike(c.Origin, "beforeremovalcharlie"); k != 1 {
			t.Errorf("%s holds %d of C's record from before the removal, want 1", n.Name, k)
		}
	}

	// C is told when it reaches a member, and says so.
	c.Write("toldcharlie") // a local write makes C try the members now
	e2ekit.Poll(t, "C's status to say it was removed", 60*time.Second, func() bool { return c.Peers().RemovedBy != "" })
	if out := c.MustRun(nil, "status"); !strings.Contains(out, "removed from its group") {
		t.Errorf("C's status does not say it was removed:\n%s", out)
	}
	if out := c.MustRun(nil, "peers"); !strings.Contains(out, "was removed from its group") {
		t.Errorf("C's peers does not say it was removed:\n%s", out)
	}
	if out := c.MustRun(nil, "peers", "leave"); !strings.Contains(out, "Left the group") {
		t.Fatalf("leave: %s", out)
	}
	st := c.Peers()
	if st.RemovedBy != "" || len(st.Devices) != 1 || !st.Devices[0].Self || st.Devices[0].State != memsync.StateAlive {
		t.Fatalf("C after leaving: %+v", st)
	}
	if k := c.RecordsLike(c.Origin, "afterremoval"); k != 30 {
		t.Errorf("C kept %d of its own 30 records after leaving, want 30", k)
	}
}

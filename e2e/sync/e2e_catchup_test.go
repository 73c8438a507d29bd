package sync

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/chromedp/chromedp"
)

// catchUpRE is the progress line `memnode peers` prints while a device catches up.
var catchUpRE = regexp.MustCompile(`catching up: (\d+) of (\d+) ops here, (\d+) to pull`)

// TestCatchUpShowsProgress is issue 25's "catch-up shows progress" end to end: a new device
// B joins A, which holds 3,000 imported observations, over real libp2p on loopback, and is
// held mid-transfer by the e2e binary's snapshot gate (A serves the beginning and two
// chunks of its snapshot and waits while the gate file exists: node/e2egate_e2e.go), so
// nothing here depends on timing. While it is held, `memnode peers`, `memnode status` and
// the viewer's Devices page in a real Chromium all say how many ops B has of how many it
// expects — never "nothing to pull" — and how many of the snapshot's rows are installed
// (committed chunk by chunk, issue 29); once the gate opens, B holds everything and the
// line is gone everywhere.
func TestCatchUpShowsProgress(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("real processes and a browser: skipped in -short")
	}
	const total = 3_000
	b := e2ekit.NewBrowser(t)
	ports := e2ekit.SyncPorts{}
	a, dev := e2ekit.NewSyncNode(t, "dev-a", ports), e2ekit.NewSyncNode(t, "dev-b", ports)
	gate := filepath.Join(t.TempDir(), "hold-the-snapshot")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a.Extra = append(a.Extra, "MEMNODE_E2E_SNAPSHOT_GATE="+gate, "MEMNODE_E2E_SNAPSHOT_GATE_AFTER=3") // the beginning and two chunks of rows
	logsOnFailure(t, a, dev)
	a.StartSync(t)
	importHistory(t, a, total, "01M8CU", "catch-up record %d", "arrives on the new device while it shows its progress")
	aOps := a.Peers().OpsHeld
	if aOps < total {
		t.Fatalf("A holds %d ops after importing %d observations", aOps, total)
	}

	dev.StartSync(t)
	if out := dev.MustRun(nil, "peers", "join", a.Invite("2m")); !strings.Contains(out, "Joined") {
		t.Fatalf("join: %s", out)
	}
	blog := filepath.Join(dev.DataDir, "logs", "memnode.log")
	e2ekit.Poll(t, "B to install part of A's snapshot and hear what A holds", 60*time.Second, func() bool {
		st := dev.Peers()
		logged, _ := os.ReadFile(blog)
		return len(st.Devices) == 2 && st.Devices[1].Compared && strings.Contains(string(logged), "catching up from a snapshot") &&
			st.Snapshot != nil && st.Snapshot.Rows > 0
	})

	// Held: B has heard A's vector and installed two chunks of A's snapshot.
	st := dev.Peers()
	if s := st.Snapshot; s.Rows >= s.Total || s.Total < total {
		t.Fatalf("B mid-transfer: snapshot %d of %d rows installed, want part of at least %d", s.Rows, s.Total, total)
	}
	snapLine := fmt.Sprintf("snapshot: %d of %d rows installed", st.Snapshot.Rows, st.Snapshot.Total)
	if st.OpsKnown < aOps || st.OpsHeld >= st.OpsKnown {
		t.Fatalf("B mid-transfer: %d of %d ops, want fewer than it knows, and it knows at least A's %d", st.OpsHeld, st.OpsKnown, aOps)
	}
	if d := st.Devices[1]; d.Ahead == 0 || d.Ahead > st.OpsKnown-st.OpsHeld {
		t.Fatalf("B mid-transfer: A's row says %d to pull, catch-up says %d", d.Ahead, st.OpsKnown-st.OpsHeld)
	}
	out := dev.MustRun(nil, "peers")
	m := catchUpRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("B's peers mid-transfer has no catch-up line:\n%s", out)
	}
	held, _ := strconv.ParseUint(m[1], 10, 64)
	known, _ := strconv.ParseUint(m[2], 10, 64)
	pull, _ := strconv.ParseUint(m[3], 10, 64)
	if held >= known || pull != known-held || known < aOps {
		t.Fatalf("B's peers mid-transfer says %q (A holds %d ops)\n%s", m[0], aOps, out)
	}
	if !strings.Contains(out, m[0]+"; "+snapLine) {
		t.Errorf("B's peers mid-transfer does not say %q:\n%s", snapLine, out)
	}
	if !regexp.MustCompile(`dev-a\s.*\s` + strconv.FormatUint(st.Devices[1].Ahead, 10) + `\s+\d+\s`).MatchString(out) {
		t.Errorf("B's peers mid-transfer: A's row does not show %d to pull:\n%s", st.Devices[1].Ahead, out)
	}
	if out := dev.MustRun(nil, "status"); !regexp.MustCompile(`sync:\s+2 devices, .*catching up: \d+ of ` + m[2] + ` ops here; ` + snapLine).MatchString(out) {
		t.Errorf("B's status mid-transfer does not show the catch-up:\n%s", out)
	}

	url := strings.Fields(dev.MustRun(nil, "viewer"))[0]
	b.Do("open B's one-time viewer URL", chromedp.Navigate(url))
	b.WaitJS("the viewer to be ready", `document.body.dataset.ready === 'true'`, 30*time.Second)
	b.Do("open B's devices page", chromedp.Navigate(fmt.Sprintf("http://127.0.0.1:%d/#/devices", dev.Port)))
	b.WaitJS("the catch-up line", `/^Catching up: \d+ of \d+ ops here, \d+ to pull; snapshot: \d+ of \d+ rows installed$/.test(document.getElementById('catch-up')?.textContent || '')`, 30*time.Second)
	line := e2ekit.Eval[string](b, `document.getElementById('catch-up').textContent`)
	vm := regexp.MustCompile(`Catching up: (\d+) of (\d+) ops here, (\d+) to pull; (snapshot: \d+ of \d+ rows installed)`).FindStringSubmatch(line)
	if vm[4] != snapLine {
		t.Errorf("B's devices page mid-transfer says %q, peers %q", vm[4], snapLine)
	}
	vHeld, _ := strconv.ParseUint(vm[1], 10, 64)
	vKnown, _ := strconv.ParseUint(vm[2], 10, 64)
	if vHeld >= vKnown || vKnown < aOps {
		t.Fatalf("B's devices page mid-transfer: %q (A holds %d ops)", line, aOps)
	}
	if pullCell := e2ekit.Eval[string](b, `[...document.querySelectorAll('#peers tbody tr')].find((r) => r.textContent.includes('dev-a')).children[4].textContent`); pullCell == "0" || pullCell == "" {
		t.Fatalf("B's devices page mid-transfer: A's To pull cell is %q", pullCell)
	}
	b.Shot("catch-up-mid-transfer")

	// The gate opens: B installs the rest and the progress line goes away everywhere.
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	e2ekit.Poll(t, "B to hold everything A announced", 2*time.Minute, func() bool {
		st := dev.Peers()
		return st.OpsHeld == st.OpsKnown && st.OpsHeld >= aOps
	})
	bdb := dev.Rodb()
	defer bdb.Close()
	if n := dev.Count(bdb, "SELECT COUNT(*) FROM observations"); n != total {
		t.Fatalf("B holds %d observations once caught up, want %d", n, total)
	}
	if out := dev.MustRun(nil, "peers"); strings.Contains(out, "catching up") {
		t.Errorf("B's peers once caught up still shows catching up:\n%s", out)
	}
	if out := dev.MustRun(nil, "status"); strings.Contains(out, "catching up") {
		t.Errorf("B's status once caught up still shows catching up:\n%s", out)
	}
	b.WaitJS("the catch-up line to go", `document.querySelector('#peers') && !document.getElementById('catch-up')`, 30*time.Second)
}

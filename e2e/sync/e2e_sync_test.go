package sync

import (
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
	memsync "github.com/memnode/memnode/sync"
)

// searchCLI reports whether `memnode search` and `memnode forget` are in the command table.
func searchCLI(in *e2ekit.Instance) bool {
	help := in.MustRun(nil, "help")
	for _, c := range []string{"search", "forget"} {
		if !regexp.MustCompile(`(?m)^  ` + c + ` `).MatchString(help) {
			return false
		}
	}
	return true
}

// forgeSecret returns a well-formed code (valid checksum, same inviter and address) whose
// secret differs from code's: only the pairing proof can tell it from the real one.
func forgeSecret(t *testing.T, code string) string {
	t.Helper()
	enc := base32.StdEncoding.WithPadding(base32.NoPadding)
	b, err := enc.DecodeString(strings.TrimPrefix(code, "MN1"))
	if err != nil || len(b) < 1+16+4 {
		t.Fatalf("decode own invite code: %v", err)
	}
	body := b[:len(b)-4]
	body[1] ^= 0x5a // first secret byte
	b = binary.BigEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
	return "MN1" + enc.EncodeToString(b)
}

// inviteExpiry reads the expiry a code carries (after the version byte and the secret).
func inviteExpiry(t *testing.T, code string) time.Time {
	t.Helper()
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.TrimPrefix(code, "MN1"))
	if err != nil || len(b) < 1+16+4 {
		t.Fatalf("decode own invite code: %v", err)
	}
	exp, k := binary.Uvarint(b[1+16:])
	if k <= 0 {
		t.Fatal("invite code without expiry")
	}
	return time.Unix(int64(exp), 0)
}

// typo changes one character of the code's body, as a person copying it might.
func typo(code string) string {
	i := len(code) / 2
	c := byte('A')
	if code[i] == 'A' {
		c = 'B'
	}
	return code[:i] + string(c) + code[i+1:]
}

// TestSyncThreeNodes is issue #5's acceptance test over real processes: three nodes with
// separate data dirs form a group by invite codes; records written at each appear in search
// on all; forget on one removes the record everywhere; forged, mistyped and expired codes
// get nothing; a stopped node catches up on restart; a removed device gets nothing new.
func TestSyncThreeNodes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("three-node sync test skipped in -short")
	}
	began := time.Now()
	step := func(s string) { t.Logf("%6.1fs  %s", time.Since(began).Seconds(), s) }
	ports := e2ekit.SyncPorts{}
	a, b, c := e2ekit.NewSyncNode(t, "dev-a", ports), e2ekit.NewSyncNode(t, "dev-b", ports), e2ekit.NewSyncNode(t, "dev-c", ports)
	nodes := []*e2ekit.SyncNode{a, b, c}
	defer func() {
		if t.Failed() {
			for _, n := range nodes {
				logs, _ := os.ReadFile(filepath.Join(n.DataDir, "logs", "memnode.log"))
				t.Logf("---- %s log:\n%s", n.Name, e2ekit.Tail(string(logs), 6000))
			}
		}
	}()
	cli := searchCLI(a.Instance)
	if !cli {
		t.Log("NOTE: `memnode search`/`memnode forget` are not in the command table: searching the FTS index " +
			"read-only and forgetting through the replica of a stopped node instead")
	}

	// 1. Start three nodes; B and C join A's invites; everyone sees three live devices.
	step("1. start A, B, C")
	for _, n := range nodes {
		n.StartSync(t)
		st := n.Peers()
		if len(st.Devices) != 1 || !st.Devices[0].Self || st.Devices[0].Name != n.Name {
			t.Fatalf("%s: fresh node's devices: %+v", n.Name, st.Devices)
		}
		n.Origin = st.Devices[0].PeerID
	}
	var codes []string
	for _, joiner := range []*e2ekit.SyncNode{b, c} {
		code := a.Invite("2m")
		codes = append(codes, code)
		var out string
		if joiner == b {
			out = joiner.MustRun(nil, "peers", "join", code)
		} else { // the code on stdin, as people are told to do to keep it out of shell history
			out = joiner.MustRun([]byte(code+"\n"), "peers", "join")
		}
		if !strings.Contains(out, "Joined") {
			t.Fatalf("%s: join: %s", joiner.Name, out)
		}
	}
	step("   B and C joined; waiting for three live devices everywhere")
	for _, n := range nodes {
		e2ekit.Poll(t, n.Name+" to list 3 live devices", 30*time.Second, func() bool {
			st := n.Peers()
			if len(st.Devices) != 3 {
				return false
			}
			for _, d := range st.Devices {
				if d.State != memsync.StateAlive {
					return false
				}
			}
			return true
		})
	}

	// 2. Hook events at each node show up in search on all three, attributed to their device.
	step("2. hook events at each node")
	words := map[*e2ekit.SyncNode]string{a: "zephyralpha", b: "quokkabravo", c: "marmotcharlie"}
	for _, n := range nodes {
		n.Write(words[n])
	}
	for _, n := range nodes {
		for _, w := range nodes {
			e2ekit.Poll(t, fmt.Sprintf("%s to find %s's record %q", n.Name, w.Name, words[w]), 30*time.Second, func() bool {
				return len(n.Find(cli, words[w])) > 0
			})
			hits := n.Find(cli, words[w])
			if len(hits) != 1 || hits[0].Origin != w.Origin || hits[0].Device != w.Name {
				t.Errorf("%s: hits for %q = %+v, want one from %s (%s)", n.Name, words[w], hits, w.Name, w.Origin)
			}
		}
	}
	step("   every node finds every record")
	// All three write to a project named syncproj: B's session-start context shows A's and
	// C's observations tagged with their device, its own untagged.
	if ctx := b.MustRun(nil, "context", "--project", "syncproj"); !strings.Contains(ctx, "["+a.Name+"]") ||
		!strings.Contains(ctx, "["+c.Name+"]") || strings.Contains(ctx, "["+b.Name+"]") {
		t.Errorf("B's context should tag A's and C's records with their device names:\n%s", ctx)
	}

	// 3. Forget on B removes A's record on all three, op payloads included.
	step("3. forget A's record on B")
	aID := b.Find(cli, words[a])[0].ID
	b.Forget(cli, aID)
	for _, n := range nodes {
		e2ekit.Poll(t, n.Name+" to forget "+words[a], 30*time.Second, func() bool {
			return len(n.Find(cli, words[a])) == 0 && n.PayloadCount(words[a]) == 0
		})
		db := n.Rodb()
		if k := n.Count(db, "SELECT COUNT(*) FROM tombstones WHERE id = ?", aID); k != 1 {
			t.Errorf("%s: tombstones for %s = %d, want 1", n.Name, aID, k)
		}
		if k := n.Count(db, "SELECT COUNT(*) FROM observations WHERE id = ?", aID); k != 0 {
			t.Errorf("%s: forgotten observation still stored", n.Name)
		}
		db.Close()
		// The others' records are untouched.
		for _, w := range []*e2ekit.SyncNode{b, c} {
			if len(n.Find(cli, words[w])) != 1 {
				t.Errorf("%s: lost %s's record while forgetting A's", n.Name, w.Name)
			}
		}
	}

	// 4. A fourth node with a mistyped, a forged and an expired code gets nothing.
	step("4. D with bad codes")
	d := e2ekit.NewSyncNode(t, "dev-d", ports)
	defer func() {
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(d.DataDir, "logs", "memnode.log"))
			t.Logf("---- dev-d log:\n%s", e2ekit.Tail(string(logs), 4000))
		}
	}()
	d.StartSync(t)
	d.Origin = d.Peers().Devices[0].PeerID
	valid := a.Invite("2m")
	codes = append(codes, valid)
	for _, bad := range []struct{ what, code, want string }{
		{"a used code", codes[0], "refused"}, // A has an invite open, so D gets to present it
		{"a mistyped code", typo(valid), "malformed"},
		{"a forged code", forgeSecret(t, valid), "refused"},
	} {
		r := d.Run(nil, "peers", "join", bad.code)
		if r.Code == 0 || !strings.Contains(r.Stderr, bad.want) {
			t.Errorf("D joins with %s: exit %d, stderr %q; want non-zero and %q", bad.what, r.Code, r.Stderr, bad.want)
		}
	}
	if st := a.Peers(); st.PendingInvites != 1 {
		t.Errorf("A's pending invites after the failed joins = %d, want 1 (a forgery must not burn the real code)", st.PendingInvites)
	}
	expired := a.Invite("1s")
	codes = append(codes, expired)
	exp := inviteExpiry(t, expired)
	e2ekit.Poll(t, "the clock to pass the 1 s invite's expiry", 5*time.Second, func() bool { return time.Now().After(exp) })
	if r := d.Run(nil, "peers", "join", expired); r.Code == 0 || !strings.Contains(r.Stderr, "expired") {
		t.Errorf("D joins with an expired code: exit %d, stderr %q; want non-zero and \"expired\"", r.Code, r.Stderr)
	}
	if st := d.Peers(); len(st.Devices) != 1 {
		t.Errorf("D's devices after refused joins: %+v", st.Devices)
	}
	for _, w := range nodes {
		if hits := d.Find(cli, words[w]); len(hits) != 0 {
			t.Errorf("D found %s's record: %+v", w.Name, hits)
		}
	}
	if k := d.ForeignOps(); k != 0 {
		t.Errorf("D holds %d ops of other devices", k)
	}
	if st := a.Peers(); len(st.Devices) != 3 {
		t.Errorf("A's devices after D's attempts: %d, want 3", len(st.Devices))
	}
	d.MustRun(nil, "stop")

	// 5. Stop B; write on A and C; restart B: it catches up (C's record reaches it too).
	step("5. stop B, write on A and C, restart B")
	b.MustRun(nil, "stop")
	late := map[*e2ekit.SyncNode]string{a: "ibexdelta", c: "lemurecho"}
	a.Write(late[a])
	c.Write(late[c])
	for _, w := range []*e2ekit.SyncNode{a, c} {
		for _, n := range []*e2ekit.SyncNode{a, c} {
			e2ekit.Poll(t, fmt.Sprintf("%s to have %q", n.Name, late[w]), 30*time.Second, func() bool { return len(n.Find(cli, late[w])) > 0 })
		}
	}
	for _, w := range late {
		if hits := b.Find(false, w); len(hits) != 0 { // the database, not the CLI: search would start B
			t.Fatalf("stopped B already has %q", w)
		}
	}
	b.StartSync(t)
	for _, w := range []*e2ekit.SyncNode{a, c} {
		e2ekit.Poll(t, fmt.Sprintf("restarted B to catch up on %s's %q", w.Name, late[w]), 40*time.Second, func() bool {
			hits := b.Find(cli, late[w])
			return len(hits) == 1 && hits[0].Origin == w.Origin
		})
	}
	step("   B caught up")

	// 6. Remove C on A: C gets nothing written afterwards, and what C writes reaches no one.
	step("6. remove C")
	if out := a.MustRun(nil, "peers", "remove", c.Name); !strings.Contains(out, "Removed "+c.Name) {
		t.Fatalf("remove: %s", out)
	}
	st := a.Peers()
	for _, dv := range st.Devices {
		if dv.PeerID == c.Origin {
			t.Errorf("A still lists removed C: %+v", dv)
		}
	}
	if len(st.Devices) != 2 || len(st.Removed) != 1 || st.Removed[0] != c.Origin {
		t.Errorf("A's group after removing C: devices %+v removed %v", st.Devices, st.Removed)
	}
	if out := a.MustRun(nil, "peers"); strings.Contains(out, c.Name) || !strings.Contains(out, b.Name) {
		t.Errorf("memnode peers on A after removing C:\n%s", out)
	}
	after := map[*e2ekit.SyncNode]string{a: "okapifoxtrot", c: "tapirgolf"}
	a.Write(after[a])
	c.Write(after[c])
	e2ekit.Poll(t, "B to get A's record written after C's removal", 30*time.Second, func() bool { return len(b.Find(cli, after[a])) == 1 })
	e2ekit.Poll(t, "B to list C as removed", 30*time.Second, func() bool {
		st := b.Peers()
		return len(st.Devices) == 2 && len(st.Removed) == 1 && st.Removed[0] == c.Origin
	})
	e2ekit.Poll(t, "C to have its own record", 30*time.Second, func() bool { return len(c.Find(cli, after[c])) == 1 })
	// Give the group a few more sessions (A writes again and B must get that too) before
	// looking at what C has.
	a.Write("yakhotel")
	e2ekit.Poll(t, "B to get A's second record after the removal", 30*time.Second, func() bool { return len(b.Find(cli, "yakhotel")) == 1 })
	for _, w := range []string{after[a], "yakhotel"} {
		if hits := c.Find(cli, w); len(hits) != 0 || c.PayloadCount(w) != 0 {
			t.Errorf("removed C received %q: %+v", w, hits)
		}
	}
	for _, n := range []*e2ekit.SyncNode{a, b} {
		if hits := n.Find(cli, after[c]); len(hits) != 0 || n.PayloadCount(after[c]) != 0 {
			t.Errorf("%s received %q, written on removed C: %+v", n.Name, after[c], hits)
		}
	}

	// The invite codes reached no file in any data dir (logs included), and neither did the
	// forgotten text (database, WAL, logs, spool), while the others' records are there.
	step("stop all; look for codes and forgotten text")
	for _, n := range nodes {
		n.MustRun(nil, "stop")
	}
	for _, n := range append(nodes, d) {
		for _, code := range codes {
			e2ekit.GrepDataDir(t, n.DataDir, code)
		}
		e2ekit.GrepDataDir(t, n.DataDir, words[a])
	}
	for _, n := range nodes {
		if !dataDirContains(t, n.DataDir, words[b]) {
			t.Errorf("%s's data dir lacks %q: the file scan would not see forgotten text either", n.Name, words[b])
		}
	}
	step("done")
}

func dataDirContains(t *testing.T, dir, needle string) bool {
	t.Helper()
	return len(testkit.FilesContaining(t, dir, needle)) > 0
}

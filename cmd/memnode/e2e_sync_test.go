package main

import (
	"context"
	"database/sql"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
	memsync "github.com/memnode/memnode/sync"
)

// syncNode is one device of the sync acceptance test: a data dir, fixed API/sync/gossip
// ports (so a restarted node comes back where the others last saw it) and a device name.
type syncNode struct {
	*instance
	name   string
	origin string // peer ID = replica origin, read from `memnode peers --json`
	proj   string // a git project dir the node's hook events come from
	seq    int
}

// syncPorts hands out distinct ports that are free for TCP and UDP on 127.0.0.1 (libp2p
// listens on TCP and QUIC on the sync port, memberlist on TCP and UDP on the gossip port).
type syncPorts map[int]bool

func (used syncPorts) next(t *testing.T) int {
	t.Helper()
	for range 50 {
		p := freePort(t)
		if used[p] {
			continue
		}
		u, err := net.ListenPacket("udp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		u.Close()
		used[p] = true
		return p
	}
	t.Fatal("no free port pair found")
	return 0
}

func newSyncNode(t *testing.T, name string, ports syncPorts) *syncNode {
	t.Helper()
	in := newInstance(t)
	for used := ports; used[in.port]; {
		in.port = freePort(t)
	}
	ports[in.port] = true
	in.extra = []string{
		"MEMNODE_SYNC_HOST=127.0.0.1",
		"MEMNODE_SYNC_PORT=" + strconv.Itoa(ports.next(t)),
		"MEMNODE_GOSSIP_PORT=" + strconv.Itoa(ports.next(t)),
		"MEMNODE_DEVICE_NAME=" + name,
	}
	proj := filepath.Join(t.TempDir(), "syncproj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &syncNode{instance: in, name: name, proj: proj}
}

// startSync starts n and waits until its device sync answers (`memnode start` returns when
// the database is ready; sync starts right after).
func (n *syncNode) startSync(t *testing.T) {
	t.Helper()
	n.start()
	poll(t, n.name+"'s device sync to start", 20*time.Second, func() bool {
		return n.run(nil, "peers", "--json").code == 0
	})
}

func (n *syncNode) peers() memsync.Status {
	n.tb.Helper()
	var st memsync.Status
	out := n.mustRun(nil, "peers", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		n.tb.Fatalf("%s: peers --json: %v\n%s", n.name, err, out)
	}
	return st
}

// invite prints a code on n and parses it from stdout.
func (n *syncNode) invite(ttl string) string {
	n.tb.Helper()
	out := n.mustRun(nil, "peers", "invite", "--ttl", ttl)
	f := strings.Fields(out)
	if len(f) == 0 || !strings.HasPrefix(f[0], "MN1") || !strings.Contains(out, "memnode peers join "+f[0]) {
		n.tb.Fatalf("%s: invite output: %q", n.name, out)
	}
	return f[0]
}

// write fires a real Claude Code prompt and tool use at n whose observation carries word;
// the prompt does not, so forgetting the observation removes every trace of word.
func (n *syncNode) write(word string) {
	n.tb.Helper()
	n.seq++
	sid := fmt.Sprintf("sync-%s-%d", n.name, n.seq)
	prompt := fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%s,"hook_event_name":"UserPromptSubmit","prompt":"check the build on this device, step %d"}`,
		sid, jsonString(n.proj), n.seq)
	obs := fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%s,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_%d","tool_input":{"command":"grep -rn %s internal/","description":"find %s"},"tool_response":{"stdout":"internal/sync/%s.go:12: func %s() {}\n","stderr":""}}`,
		sid, jsonString(n.proj), n.seq, word, word, word, word)
	for _, ev := range []struct{ name, payload string }{{"session-init", prompt}, {"observation", obs}} {
		r := n.run([]byte(ev.payload), "hook", "claude-code", ev.name)
		if r.code != 0 || !json.Valid([]byte(r.stdout)) {
			n.tb.Fatalf("%s: hook %s: exit %d stdout %q stderr %q", n.name, ev.name, r.code, r.stdout, r.stderr)
		}
	}
}

// searchCLI reports whether `memnode search` and `memnode forget` are in the command table.
func searchCLI(in *instance) bool {
	help := in.mustRun(nil, "help")
	for _, c := range []string{"search", "forget"} {
		if !regexp.MustCompile(`(?m)^  ` + c + ` `).MatchString(help) {
			return false
		}
	}
	return true
}

// rodb opens n's database read-only for one check (a fresh handle each time: a stopped node
// removes its WAL files, which an old read-only handle would not see come back).
func (n *syncNode) rodb() *sql.DB {
	n.tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(n.dataDir, "memnode.db")+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		n.tb.Fatal(err)
	}
	return db
}

// find returns n's observation hits for word: through `memnode search --json` when the CLI
// has it, else through the same FTS index read straight from the database.
func (n *syncNode) find(cli bool, word string) []apitype.Hit {
	n.tb.Helper()
	if cli {
		var res apitype.Results
		out := n.mustRun(nil, "search", word, "--type", "observations", "--json")
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			n.tb.Fatalf("%s: search --json: %v\n%s", n.name, err, out)
		}
		return res.Hits
	}
	db := n.rodb()
	defer db.Close()
	rows, err := db.Query(`SELECT o.id, o.title, o.origin, COALESCE(d.name, '') FROM observations_fts f
		JOIN observations o ON o.rowid = f.rowid LEFT JOIN devices d ON d.origin = o.origin
		WHERE observations_fts MATCH ?`, `"`+word+`"`)
	if err != nil {
		n.tb.Fatalf("%s: search db: %v", n.name, err)
	}
	defer rows.Close()
	var hits []apitype.Hit
	for rows.Next() {
		h := apitype.Hit{Kind: "observation"}
		if err := rows.Scan(&h.ID, &h.Title, &h.Origin, &h.Device); err != nil {
			n.tb.Fatal(err)
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		n.tb.Fatal(err)
	}
	return hits
}

// payloadCount counts op-log payloads on n that contain s: those stored in the op and those
// an in-row observation op (ops.inrow, migration 7) is rebuilt from when it is served.
func (n *syncNode) payloadCount(s string) int {
	n.tb.Helper()
	db := n.rodb()
	defer db.Close()
	return n.count(db, `SELECT COUNT(*) FROM ops WHERE instr(CAST(payload AS TEXT), ?1) > 0
		OR (inrow = 1 AND record_id IN (SELECT id FROM observations
			WHERE instr(title || ' ' || subtitle || ' ' || narrative || ' ' || facts, ?1) > 0))`, s)
}

// foreignOps counts ops on n that some other device wrote.
func (n *syncNode) foreignOps() int {
	n.tb.Helper()
	db := n.rodb()
	defer db.Close()
	return n.count(db, "SELECT COUNT(*) FROM ops WHERE origin != ?", n.origin)
}

// forget forgets id on n: `memnode forget` when the CLI has it, else the replica's Forget
// (the call the API's forget route makes) on n's data dir while n is stopped.
func (n *syncNode) forget(cli bool, id string) {
	n.tb.Helper()
	if cli {
		if out := n.mustRun(nil, "forget", id); !strings.Contains(out, "forgot 1 of 1") {
			n.tb.Fatalf("%s: forget: %s", n.name, out)
		}
		return
	}
	n.mustRun(nil, "stop")
	rep, err := replica.Open(context.Background(), replica.Config{Path: filepath.Join(n.dataDir, "memnode.db"), Origin: n.origin})
	if err != nil {
		n.tb.Fatal(err)
	}
	found, err := rep.Forget(context.Background(), []string{id})
	if cerr := rep.Close(); err == nil {
		err = cerr
	}
	if err != nil || found != 1 {
		n.tb.Fatalf("%s: forget %s: found %d, %v", n.name, id, found, err)
	}
	n.start()
}

// poll runs cond every interval until it holds; a process per check is costly, so the
// interval is coarser than waitFor's. No wait outlasts the test's overall deadline.
func poll(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	if end, ok := t.Deadline(); ok && end.Before(deadline) {
		deadline = end
	}
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(150 * time.Millisecond) // polling interval, not synchronisation
	}
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
	if testing.Short() {
		t.Skip("three-node sync test skipped in -short")
	}
	began := time.Now()
	step := func(s string) { t.Logf("%6.1fs  %s", time.Since(began).Seconds(), s) }
	ports := syncPorts{}
	a, b, c := newSyncNode(t, "dev-a", ports), newSyncNode(t, "dev-b", ports), newSyncNode(t, "dev-c", ports)
	nodes := []*syncNode{a, b, c}
	defer func() {
		if t.Failed() {
			for _, n := range nodes {
				logs, _ := os.ReadFile(filepath.Join(n.dataDir, "logs", "memnode.log"))
				t.Logf("---- %s log:\n%s", n.name, tail(string(logs), 6000))
			}
		}
	}()
	cli := searchCLI(a.instance)
	if !cli {
		t.Log("NOTE: `memnode search`/`memnode forget` are not in the command table: searching the FTS index " +
			"read-only and forgetting through the replica of a stopped node instead")
	}

	// 1. Start three nodes; B and C join A's invites; everyone sees three live devices.
	step("1. start A, B, C")
	for _, n := range nodes {
		n.startSync(t)
		st := n.peers()
		if len(st.Devices) != 1 || !st.Devices[0].Self || st.Devices[0].Name != n.name {
			t.Fatalf("%s: fresh node's devices: %+v", n.name, st.Devices)
		}
		n.origin = st.Devices[0].PeerID
	}
	var codes []string
	for _, joiner := range []*syncNode{b, c} {
		code := a.invite("2m")
		codes = append(codes, code)
		var out string
		if joiner == b {
			out = joiner.mustRun(nil, "peers", "join", code)
		} else { // the code on stdin, as people are told to do to keep it out of shell history
			out = joiner.mustRun([]byte(code+"\n"), "peers", "join")
		}
		if !strings.Contains(out, "Joined") {
			t.Fatalf("%s: join: %s", joiner.name, out)
		}
	}
	step("   B and C joined; waiting for three live devices everywhere")
	for _, n := range nodes {
		poll(t, n.name+" to list 3 live devices", 30*time.Second, func() bool {
			st := n.peers()
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
	words := map[*syncNode]string{a: "zephyralpha", b: "quokkabravo", c: "marmotcharlie"}
	for _, n := range nodes {
		n.write(words[n])
	}
	for _, n := range nodes {
		for _, w := range nodes {
			poll(t, fmt.Sprintf("%s to find %s's record %q", n.name, w.name, words[w]), 30*time.Second, func() bool {
				return len(n.find(cli, words[w])) > 0
			})
			hits := n.find(cli, words[w])
			if len(hits) != 1 || hits[0].Origin != w.origin || hits[0].Device != w.name {
				t.Errorf("%s: hits for %q = %+v, want one from %s (%s)", n.name, words[w], hits, w.name, w.origin)
			}
		}
	}
	step("   every node finds every record")
	// All three write to a project named syncproj: B's session-start context shows A's and
	// C's observations tagged with their device, its own untagged.
	if ctx := b.mustRun(nil, "context", "--project", "syncproj"); !strings.Contains(ctx, "["+a.name+"]") ||
		!strings.Contains(ctx, "["+c.name+"]") || strings.Contains(ctx, "["+b.name+"]") {
		t.Errorf("B's context should tag A's and C's records with their device names:\n%s", ctx)
	}

	// 3. Forget on B removes A's record on all three, op payloads included.
	step("3. forget A's record on B")
	aID := b.find(cli, words[a])[0].ID
	b.forget(cli, aID)
	for _, n := range nodes {
		poll(t, n.name+" to forget "+words[a], 30*time.Second, func() bool {
			return len(n.find(cli, words[a])) == 0 && n.payloadCount(words[a]) == 0
		})
		db := n.rodb()
		if k := n.count(db, "SELECT COUNT(*) FROM tombstones WHERE id = ?", aID); k != 1 {
			t.Errorf("%s: tombstones for %s = %d, want 1", n.name, aID, k)
		}
		if k := n.count(db, "SELECT COUNT(*) FROM observations WHERE id = ?", aID); k != 0 {
			t.Errorf("%s: forgotten observation still stored", n.name)
		}
		db.Close()
		// The others' records are untouched.
		for _, w := range []*syncNode{b, c} {
			if len(n.find(cli, words[w])) != 1 {
				t.Errorf("%s: lost %s's record while forgetting A's", n.name, w.name)
			}
		}
	}

	// 4. A fourth node with a mistyped, a forged and an expired code gets nothing.
	step("4. D with bad codes")
	d := newSyncNode(t, "dev-d", ports)
	defer func() {
		if t.Failed() {
			logs, _ := os.ReadFile(filepath.Join(d.dataDir, "logs", "memnode.log"))
			t.Logf("---- dev-d log:\n%s", tail(string(logs), 4000))
		}
	}()
	d.startSync(t)
	d.origin = d.peers().Devices[0].PeerID
	valid := a.invite("2m")
	codes = append(codes, valid)
	for _, bad := range []struct{ what, code, want string }{
		{"a used code", codes[0], "refused"}, // A has an invite open, so D gets to present it
		{"a mistyped code", typo(valid), "malformed"},
		{"a forged code", forgeSecret(t, valid), "refused"},
	} {
		r := d.run(nil, "peers", "join", bad.code)
		if r.code == 0 || !strings.Contains(r.stderr, bad.want) {
			t.Errorf("D joins with %s: exit %d, stderr %q; want non-zero and %q", bad.what, r.code, r.stderr, bad.want)
		}
	}
	if st := a.peers(); st.PendingInvites != 1 {
		t.Errorf("A's pending invites after the failed joins = %d, want 1 (a forgery must not burn the real code)", st.PendingInvites)
	}
	expired := a.invite("1s")
	codes = append(codes, expired)
	exp := inviteExpiry(t, expired)
	poll(t, "the clock to pass the 1 s invite's expiry", 5*time.Second, func() bool { return time.Now().After(exp) })
	if r := d.run(nil, "peers", "join", expired); r.code == 0 || !strings.Contains(r.stderr, "expired") {
		t.Errorf("D joins with an expired code: exit %d, stderr %q; want non-zero and \"expired\"", r.code, r.stderr)
	}
	if st := d.peers(); len(st.Devices) != 1 {
		t.Errorf("D's devices after refused joins: %+v", st.Devices)
	}
	for _, w := range nodes {
		if hits := d.find(cli, words[w]); len(hits) != 0 {
			t.Errorf("D found %s's record: %+v", w.name, hits)
		}
	}
	if k := d.foreignOps(); k != 0 {
		t.Errorf("D holds %d ops of other devices", k)
	}
	if st := a.peers(); len(st.Devices) != 3 {
		t.Errorf("A's devices after D's attempts: %d, want 3", len(st.Devices))
	}
	d.mustRun(nil, "stop")

	// 5. Stop B; write on A and C; restart B: it catches up (C's record reaches it too).
	step("5. stop B, write on A and C, restart B")
	b.mustRun(nil, "stop")
	late := map[*syncNode]string{a: "ibexdelta", c: "lemurecho"}
	a.write(late[a])
	c.write(late[c])
	for _, w := range []*syncNode{a, c} {
		for _, n := range []*syncNode{a, c} {
			poll(t, fmt.Sprintf("%s to have %q", n.name, late[w]), 30*time.Second, func() bool { return len(n.find(cli, late[w])) > 0 })
		}
	}
	for _, w := range late {
		if hits := b.find(false, w); len(hits) != 0 { // the database, not the CLI: search would start B
			t.Fatalf("stopped B already has %q", w)
		}
	}
	b.startSync(t)
	for _, w := range []*syncNode{a, c} {
		poll(t, fmt.Sprintf("restarted B to catch up on %s's %q", w.name, late[w]), 40*time.Second, func() bool {
			hits := b.find(cli, late[w])
			return len(hits) == 1 && hits[0].Origin == w.origin
		})
	}
	step("   B caught up")

	// 6. Remove C on A: C gets nothing written afterwards, and what C writes reaches no one.
	step("6. remove C")
	if out := a.mustRun(nil, "peers", "remove", c.name); !strings.Contains(out, "Removed "+c.name) {
		t.Fatalf("remove: %s", out)
	}
	st := a.peers()
	for _, dv := range st.Devices {
		if dv.PeerID == c.origin {
			t.Errorf("A still lists removed C: %+v", dv)
		}
	}
	if len(st.Devices) != 2 || len(st.Removed) != 1 || st.Removed[0] != c.origin {
		t.Errorf("A's group after removing C: devices %+v removed %v", st.Devices, st.Removed)
	}
	if out := a.mustRun(nil, "peers"); strings.Contains(out, c.name) || !strings.Contains(out, b.name) {
		t.Errorf("memnode peers on A after removing C:\n%s", out)
	}
	after := map[*syncNode]string{a: "okapifoxtrot", c: "tapirgolf"}
	a.write(after[a])
	c.write(after[c])
	poll(t, "B to get A's record written after C's removal", 30*time.Second, func() bool { return len(b.find(cli, after[a])) == 1 })
	poll(t, "B to list C as removed", 30*time.Second, func() bool {
		st := b.peers()
		return len(st.Devices) == 2 && len(st.Removed) == 1 && st.Removed[0] == c.origin
	})
	poll(t, "C to have its own record", 30*time.Second, func() bool { return len(c.find(cli, after[c])) == 1 })
	// Give the group a few more sessions (A writes again and B must get that too) before
	// looking at what C has.
	a.write("yakhotel")
	poll(t, "B to get A's second record after the removal", 30*time.Second, func() bool { return len(b.find(cli, "yakhotel")) == 1 })
	for _, w := range []string{after[a], "yakhotel"} {
		if hits := c.find(cli, w); len(hits) != 0 || c.payloadCount(w) != 0 {
			t.Errorf("removed C received %q: %+v", w, hits)
		}
	}
	for _, n := range []*syncNode{a, b} {
		if hits := n.find(cli, after[c]); len(hits) != 0 || n.payloadCount(after[c]) != 0 {
			t.Errorf("%s received %q, written on removed C: %+v", n.name, after[c], hits)
		}
	}

	// The invite codes reached no file in any data dir (logs included), and neither did the
	// forgotten text (database, WAL, logs, spool), while the others' records are there.
	step("stop all; look for codes and forgotten text")
	for _, n := range nodes {
		n.mustRun(nil, "stop")
	}
	for _, n := range append(nodes, d) {
		for _, code := range codes {
			grepDataDir(t, n.dataDir, code)
		}
		grepDataDir(t, n.dataDir, words[a])
	}
	for _, n := range nodes {
		if !dataDirContains(t, n.dataDir, words[b]) {
			t.Errorf("%s's data dir lacks %q: the file scan would not see forgotten text either", n.name, words[b])
		}
	}
	step("done")
}

func dataDirContains(t *testing.T, dir, needle string) bool {
	t.Helper()
	return len(testkit.FilesContaining(t, dir, needle)) > 0
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

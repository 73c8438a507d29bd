package e2ekit

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/sqliteuri"
	"github.com/memnode/memnode/replica"
	memsync "github.com/memnode/memnode/sync"
)

// SyncNode is one device of the sync acceptance test: a data dir, fixed API/sync/gossip
// ports (so a restarted node comes back where the others last saw it) and a device name.
type SyncNode struct {
	*Instance
	Name   string
	Origin string // peer ID = replica origin, read from `memnode peers --json`
	Proj   string // a git project dir the node's hook events come from
	seq    int
}

// SyncPorts hands out distinct ports that are free for TCP and UDP on 127.0.0.1 (libp2p
// listens on TCP and QUIC on the sync port, memberlist on TCP and UDP on the gossip port).
type SyncPorts map[int]bool

func (used SyncPorts) next(t *testing.T) int {
	t.Helper()
	for range 50 {
		p := FreePort(t)
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

func NewSyncNode(t *testing.T, name string, ports SyncPorts) *SyncNode {
	t.Helper()
	in := NewInstance(t)
	for used := ports; used[in.Port]; {
		in.Port = FreePort(t)
	}
	ports[in.Port] = true
	in.Extra = []string{
		"MEMNODE_SYNC_HOST=127.0.0.1",
		"MEMNODE_SYNC_PORT=" + strconv.Itoa(ports.next(t)),
		"MEMNODE_GOSSIP_PORT=" + strconv.Itoa(ports.next(t)),
		"MEMNODE_DEVICE_NAME=" + name,
	}
	proj := filepath.Join(t.TempDir(), "syncproj")
	if err := os.MkdirAll(filepath.Join(proj, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &SyncNode{Instance: in, Name: name, Proj: proj}
}

// StartSync starts n and waits until its device sync answers (`memnode start` returns when
// the database is ready; sync starts right after).
func (n *SyncNode) StartSync(t *testing.T) {
	t.Helper()
	n.Start()
	Poll(t, n.Name+"'s device sync to start", 20*time.Second, func() bool {
		return n.Run(nil, "peers", "--json").Code == 0
	})
}

func (n *SyncNode) Peers() memsync.Status {
	n.Tb.Helper()
	var st memsync.Status
	out := n.MustRun(nil, "peers", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		n.Tb.Fatalf("%s: peers --json: %v\n%s", n.Name, err, out)
	}
	return st
}

// Invite prints a code on n and parses it from stdout.
func (n *SyncNode) Invite(ttl string) string {
	n.Tb.Helper()
	out := n.MustRun(nil, "peers", "invite", "--ttl", ttl)
	f := strings.Fields(out)
	if len(f) == 0 || !strings.HasPrefix(f[0], "MN1") || !strings.Contains(out, "memnode peers join "+f[0]) {
		n.Tb.Fatalf("%s: invite output: %q", n.Name, out)
	}
	return f[0]
}

// Write fires a real Claude Code prompt and tool use at n whose observation carries word;
// the prompt does not, so forgetting the observation removes every trace of word.
func (n *SyncNode) Write(word string) {
	n.Tb.Helper()
	n.seq++
	sid := fmt.Sprintf("sync-%s-%d", n.Name, n.seq)
	prompt := fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%s,"hook_event_name":"UserPromptSubmit","prompt":"check the build on this device, step %d"}`,
		sid, JsonString(n.Proj), n.seq)
	obs := fmt.Sprintf(`{"session_id":%q,"transcript_path":"","cwd":%s,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_%d","tool_input":{"command":"grep -rn %s internal/","description":"find %s"},"tool_response":{"stdout":"internal/sync/%s.go:12: func %s() {}\n","stderr":""}}`,
		sid, JsonString(n.Proj), n.seq, word, word, word, word)
	for _, ev := range []struct{ name, payload string }{{"session-init", prompt}, {"observation", obs}} {
		r := n.Run([]byte(ev.payload), "hook", "claude-code", ev.name)
		if r.Code != 0 || !json.Valid([]byte(r.Stdout)) {
			n.Tb.Fatalf("%s: hook %s: exit %d stdout %q stderr %q", n.Name, ev.name, r.Code, r.Stdout, r.Stderr)
		}
	}
}

// Rodb opens n's database read-only for one check (a fresh handle each time: a stopped node
// removes its WAL files, which an old read-only handle would not see come back).
func (n *SyncNode) Rodb() *sql.DB {
	n.Tb.Helper()
	db, err := sql.Open("sqlite3", sqliteuri.File(filepath.Join(n.DataDir, "memnode.db"), readOnly()))
	if err != nil {
		n.Tb.Fatal(err)
	}
	return db
}

// Find returns n's observation hits for word: through `memnode search --json` when the CLI
// has it, else through the same FTS index read straight from the database.
func (n *SyncNode) Find(cli bool, word string) []apitype.Hit {
	n.Tb.Helper()
	if cli {
		var res apitype.Results
		out := n.MustRun(nil, "search", word, "--type", "observations", "--json")
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			n.Tb.Fatalf("%s: search --json: %v\n%s", n.Name, err, out)
		}
		return res.Hits
	}
	db := n.Rodb()
	defer db.Close()
	rows, err := db.Query(`SELECT o.id, o.title, o.origin, COALESCE(d.name, '') FROM observations_fts f
		JOIN observations o ON o.rowid = f.rowid LEFT JOIN devices d ON d.origin = o.origin
		WHERE observations_fts MATCH ?`, `"`+word+`"`)
	if err != nil {
		n.Tb.Fatalf("%s: search db: %v", n.Name, err)
	}
	defer rows.Close()
	var hits []apitype.Hit
	for rows.Next() {
		h := apitype.Hit{Kind: "observation"}
		if err := rows.Scan(&h.ID, &h.Title, &h.Origin, &h.Device); err != nil {
			n.Tb.Fatal(err)
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		n.Tb.Fatal(err)
	}
	return hits
}

// PayloadCount counts op-log payloads on n that contain s: those stored in the op and those
// an in-row observation op (ops.inrow, migration 7) is rebuilt from when it is served.
func (n *SyncNode) PayloadCount(s string) int {
	n.Tb.Helper()
	db := n.Rodb()
	defer db.Close()
	return n.Count(db, `SELECT COUNT(*) FROM ops WHERE instr(CAST(payload AS TEXT), ?1) > 0
		OR (inrow = 1 AND record_id IN (SELECT id FROM observations
			WHERE instr(title || ' ' || subtitle || ' ' || narrative || ' ' || facts, ?1) > 0))`, s)
}

// ForeignOps counts ops on n that some other device wrote.
func (n *SyncNode) ForeignOps() int {
	n.Tb.Helper()
	db := n.Rodb()
	defer db.Close()
	return n.Count(db, "SELECT COUNT(*) FROM ops WHERE origin_id IS NOT (SELECT id FROM origins WHERE origin = ?)", n.Origin)
}

// Forget forgets id on n: `memnode forget` when the CLI has it, else the replica's Forget
// (the call the API's forget route makes) on n's data dir while n is stopped.
func (n *SyncNode) Forget(cli bool, id string) {
	n.Tb.Helper()
	if cli {
		if out := n.MustRun(nil, "forget", id); !strings.Contains(out, "forgot 1 of 1") {
			n.Tb.Fatalf("%s: forget: %s", n.Name, out)
		}
		return
	}
	n.MustRun(nil, "stop")
	rep, err := replica.Open(context.Background(), replica.Config{Path: filepath.Join(n.DataDir, "memnode.db"), Origin: n.Origin})
	if err != nil {
		n.Tb.Fatal(err)
	}
	found, err := rep.Forget(context.Background(), []string{id})
	if cerr := rep.Close(); err == nil {
		err = cerr
	}
	if err != nil || found != 1 {
		n.Tb.Fatalf("%s: forget %s: found %d, %v", n.Name, id, found, err)
	}
	n.Start()
}

// Poll runs cond every interval until it holds; a process per check is costly, so the
// interval is coarser than waitFor's. No wait outlasts the test's overall deadline.
func Poll(t *testing.T, what string, timeout time.Duration, cond func() bool) {
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

func Tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

package team

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/team"
)

// TestTeamMembersShareAProjectThroughRqlite: two memnode nodes, not paired as devices, join
// a real 3-node rqlite cluster serving HTTPS (a test CA, given with --ca-cert; without it
// the join is one line naming --ca-cert) with the CLI and share a project; a hook event on either is
// searchable on the other within 3 s, also after a restart (the password comes back from the
// key store); the password is in no file, log or process argument.
func TestTeamMembersShareAProjectThroughRqlite(t *testing.T) {
	t.Parallel()
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 3, Users: e2ekit.TeamUsers(), TLS: true})
	caFile := filepath.Join(t.TempDir(), "team-ca.pem")
	if err := os.WriteFile(caFile, c.CACert, 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.CACert)
	clusterClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	proj := filepath.Join(t.TempDir(), "billing-api")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	a, b := e2ekit.NewTeamMember(t, proj), e2ekit.NewTeamMember(t, proj)
	urls := strings.Join(c.URLs(), ",")
	for _, m := range []struct {
		*e2ekit.TeamMember
		user string
	}{{a, "alice"}, {b, "bob"}} {
		m.Start()
		out := m.MustRun([]byte(e2ekit.E2eTeamPassword+"\n"), "team", "join", urls, "--user", m.user, "--name", "acme", "--ca-cert", caFile)
		if !strings.Contains(out, "Joined team acme: leader n") {
			t.Fatalf("join prints %q", out)
		}
		m.MustRun(nil, "team", "share", "billing-api")
	}

	a.Write(t, "zanzibarWidget")
	testkit.WaitFor(t, "A's event searchable on B", 3*time.Second, func() bool { return b.Finds(t, "zanzibarWidget") })
	b.Write(t, "quokkaLedger")
	testkit.WaitFor(t, "B's event searchable on A", 3*time.Second, func() bool { return a.Finds(t, "quokkaLedger") })

	// `team status` answers within its 2 s budget whatever the cluster does: a /nodes that
	// did not answer in it (each rqlite node asks the others) leaves the leader and nodes
	// out, so on a loaded machine one status may lack them; the next ones have them.
	var st team.Status
	testkit.WaitForState(t, "team status naming the leader and 3 nodes", 30*time.Second, func() (bool, string) {
		st = team.Status{}
		if err := json.Unmarshal([]byte(b.MustRun(nil, "team", "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st.Leader != "" && len(st.Nodes) == 3, fmt.Sprintf("%+v", st)
	})
	if !st.Joined || !st.Reachable || st.Members != 2 || len(st.Shared) != 1 || st.PushBacklog != 0 {
		t.Fatalf("status: %+v", st)
	}
	var node struct {
		Status apitype.Status `json:"status"`
	}
	if err := json.Unmarshal([]byte(b.MustRun(nil, "status", "--json")), &node); err != nil {
		t.Fatal(err)
	}
	if tm := node.Status.Team; !tm.Joined || !tm.Reachable || len(tm.Shared) != 1 || tm.Name != "acme" {
		t.Fatalf("status --json team: %+v", tm)
	}
	if out := b.MustRun(nil, "status"); !strings.Contains(out, "acme, reachable, shared: billing-api") {
		t.Fatalf("status shows no team line:\n%s", out)
	}
	var hits apitype.TeamSearchReply
	if err := json.Unmarshal([]byte(b.MustRun(nil, "search", "zanzibarWidget", "--team", "--json")), &hits); err != nil {
		t.Fatal(err)
	}
	if len(hits.Hits) != 1 || !strings.HasPrefix(hits.Hits[0].Author, "alice/") {
		t.Fatalf("search --team: %+v", hits)
	}
	if out := b.MustRun(nil, "search", "zanzibarWidget", "--team"); !strings.Contains(out, "@alice/") {
		t.Fatalf("search --team shows no author: %q", out)
	}

	// The MCP search tool's team flag, through a real `memnode mcp` on stdio against B's node:
	// the hit is A's record, from the cluster, with its author.
	mcpLines := []string{
		`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"team","method":"tools/call","params":{"name":"search","arguments":{"query":"zanzibarWidget","team":true}}}`,
	}
	r := b.Run([]byte(strings.Join(mcpLines, "\n")+"\n"), "mcp")
	if r.Code != 0 {
		t.Fatalf("memnode mcp: exit %d, stderr %s", r.Code, r.Stderr)
	}
	var teamReply struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if strings.Contains(l, `"id":"team"`) {
			if err := json.Unmarshal([]byte(l), &teamReply); err != nil {
				t.Fatalf("mcp reply: %v\n%s", err, l)
			}
		}
	}
	if c := teamReply.Result.Content; teamReply.Result.IsError || len(c) == 0 || !strings.Contains(c[0].Text, "1 team result(s)") ||
		!strings.Contains(c[0].Text, "@alice/") || !strings.Contains(c[0].Text, hits.Hits[0].ID) {
		t.Fatalf("mcp search team=true: %s", r.Stdout)
	}

	// Admins: B may not make itself one; A, the founder, makes B one with a signed change
	// that B's node sees, and removes it again.
	if r := b.Run(nil, "team", "admin", "add", "@"+st.Author); r.Code != 1 || !strings.Contains(r.Stderr, "not a team admin") {
		t.Fatalf("admin add by a non-admin: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if out := a.MustRun(nil, "team", "admin", "add", "@"+st.Author); !strings.Contains(out, "@"+st.Author+" is now a team admin.") {
		t.Fatalf("team admin add prints %q", out)
	}
	testkit.WaitForState(t, "B sees itself an admin", 5*time.Second, func() (bool, string) {
		var now team.Status
		out := b.MustRun(nil, "team", "status", "--json")
		return json.Unmarshal([]byte(out), &now) == nil && now.Admin && len(now.Admins) == 2, out
	})
	if out := b.MustRun(nil, "team", "status"); !strings.Contains(out, "admins:  @") || !strings.Contains(out, "@"+st.Author) {
		t.Fatalf("team status shows no admins:\n%s", out)
	}
	if out := b.MustRun(nil, "team", "admin", "remove", "@"+st.Author); !strings.Contains(out, "is no longer a team admin") {
		t.Fatalf("team admin remove prints %q", out)
	}

	// After a restart the node finds the password in the key store.
	a.MustRun(nil, "stop")
	a.Start()
	b.Write(t, "marmotInvoice")
	testkit.WaitFor(t, "B's event on A after A's restart", 5*time.Second, func() bool { return a.Finds(t, "marmotInvoice") })

	for _, m := range []*e2ekit.TeamMember{a, b} {
		if files := testkit.FilesContaining(t, m.DataDir, e2ekit.E2eTeamPassword); len(files) > 0 {
			t.Fatalf("the team password is written in %v", files)
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(m.PidFile()) + "/cmdline")
		if err == nil && strings.Contains(string(cmdline), e2ekit.E2eTeamPassword) {
			t.Fatal("the team password is in the node's arguments")
		}
	}

	// A row squatting A's next sequence number, written straight into rqlite: A reports it
	// as an error with its cause (team status, text and JSON; status); B still gets A's op.
	rqlite := func(path string, stmts ...[]any) []byte {
		t.Helper()
		body, _ := json.Marshal(stmts)
		req, _ := http.NewRequest(http.MethodPost, c.URLs()[0]+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(rqlitetest.Admin, c.AdminPassword)
		resp, err := clusterClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || bytes.Contains(out, []byte(`"error"`)) {
			t.Fatalf("rqlite %s: %d %s", path, resp.StatusCode, out)
		}
		return out
	}
	var last struct {
		Results []struct {
			Values [][]any `json:"values"`
		} `json:"results"`
	}
	if err := json.Unmarshal(rqlite("/db/query?level=strong", []any{`SELECT origin, author, MAX(tseq) FROM team_ops WHERE author LIKE 'alice/%' AND project = 'billing-api'`}), &last); err != nil {
		t.Fatal(err)
	}
	row := last.Results[0].Values[0]
	next := int(row[2].(float64)) + 1
	rqlite("/db/execute?transaction", []any{`INSERT INTO team_ops(origin, tseq, project, kind, record_id, hlc, payload, payload_hash, author, sig)
		VALUES (?, ?, 'billing-api', 'observation', '01SQUATSQUATSQUATSQUATSQUA', '1', NULL, 'x', ?, 'c3F1YXQ=')`, row[0], next, row[1]})
	a.Write(t, "wombatSquat")
	testkit.WaitFor(t, "A's op after the squat on B", 5*time.Second, func() bool { return b.Finds(t, "wombatSquat") })
	testkit.WaitForState(t, "the squat in A's team status --json", 5*time.Second, func() (bool, string) {
		var now team.Status
		out := a.MustRun(nil, "team", "status", "--json")
		return json.Unmarshal([]byte(out), &now) == nil && len(now.Squatted) == 1 && now.Squatted[0].TSeq == uint64(next), out
	})
	want := fmt.Sprintf("ERROR: op %d of billing-api under this device's ID", next)
	if out := a.MustRun(nil, "team", "status"); !strings.Contains(out, want) || !strings.Contains(out, "not signed by this device") {
		t.Fatalf("team status shows no squat error (want %q):\n%s", want, out)
	}
	if out := a.MustRun(nil, "status"); !strings.Contains(out, "ERROR: 1 ops written under this device's ID by someone else") {
		t.Fatalf("status shows no squat:\n%s", out)
	}

	// A wrong password: one clear line, exit 1, nothing stored.
	w := e2ekit.NewTeamMember(t, proj)
	r = w.Run([]byte("not-the-password\n"), "team", "join", urls, "--user", "alice", "--ca-cert", caFile)
	if r.Code != 1 || !strings.Contains(r.Stderr, "(401)") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || strings.Contains(r.Stderr, "not-the-password") {
		t.Fatalf("wrong password: exit %d, stderr %q", r.Code, r.Stderr)
	}
	// Without the team's CA: one line saying what to do.
	r = w.Run([]byte(e2ekit.E2eTeamPassword+"\n"), "team", "join", urls, "--user", "alice")
	if r.Code != 1 || !strings.Contains(r.Stderr, "--ca-cert") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("join over https without the CA: exit %d, stderr %q", r.Code, r.Stderr)
	}
	// Plain http beyond this machine: refused before any password is asked, one line.
	r = w.Run(nil, "team", "join", "http://192.0.2.7:4001", "--user", "alice")
	if r.Code != 1 || !strings.Contains(r.Stderr, "--insecure") || !strings.Contains(r.Stderr, "https://") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("plain http to a LAN address: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

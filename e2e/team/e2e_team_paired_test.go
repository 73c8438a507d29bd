package team

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/rqlitetest"
)

// clusterCount runs a COUNT query on the team cluster as its admin user.
func clusterCount(t *testing.T, c *rqlitetest.Cluster, sql string, args ...any) int {
	t.Helper()
	body, err := json.Marshal([][]any{append([]any{sql}, args...)})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, c.URLs()[0]+"/db/query?level=weak", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(rqlitetest.Admin, c.AdminPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Results []struct {
			Values [][]int `json:"values"`
			Error  string  `json:"error"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || len(out.Results) != 1 || out.Results[0].Error != "" || len(out.Results[0].Values) != 1 {
		t.Fatalf("cluster query %q: %v %+v", sql, err, out)
	}
	return out.Results[0].Values[0][0]
}

// envTeamPassword is the variable memnode reads the team password from (cmd/memnode/team.go).
const envTeamPassword = "MEMNODE_TEAM_PASSWORD"

// TestForgetOnAPairedDeviceLeavesTheTeam: real memnode processes — alice's laptop in a team
// on a real rqlited with bob's node, and her phone paired with the laptop by device sync
// (the phone is in no team). A hook event on the laptop reaches bob and the cluster; the
// phone forgets it with `memnode forget`; the record ends on no member (bob, the laptop)
// and not in the cluster's tables: its op payloads are NULL and `search --team` finds
// nothing.
func TestForgetOnAPairedDeviceLeavesTheTeam(t *testing.T) {
	t.Parallel()
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: []rqlitetest.User{
		{Username: "alice", Password: e2ekit.E2eTeamPassword, Perms: []string{"execute", "query", "status"}},
		{Username: "bob", Password: e2ekit.E2eTeamPassword, Perms: []string{"execute", "query", "status"}},
	}})
	ports := e2ekit.SyncPorts{}
	laptop, phone := e2ekit.NewSyncNode(t, "laptop", ports), e2ekit.NewSyncNode(t, "phone", ports)
	laptop.Extra = append(laptop.Extra, envTeamPassword+"="+e2ekit.E2eTeamPassword)
	bob := e2ekit.NewTeamMember(t, laptop.Proj)
	bob.Extra = append(bob.Extra, envTeamPassword+"="+e2ekit.E2eTeamPassword)
	t.Cleanup(func() {
		if t.Failed() {
			for name, dir := range map[string]string{"laptop": laptop.DataDir, "phone": phone.DataDir, "bob": bob.DataDir} {
				logs, _ := os.ReadFile(dir + "/logs/memnode.log")
				t.Logf("---- %s log:\n%s", name, e2ekit.Tail(string(logs), 4000))
			}
		}
	})
	urls := strings.Join(c.URLs(), ",")
	// bob founds the team: the laptop is no admin, it forgets for the team as the author.
	bob.Start()
	bob.MustRun(nil, "team", "join", urls, "--user", "bob", "--name", "acme")
	bob.MustRun(nil, "team", "share", "syncproj")
	for _, n := range []*e2ekit.SyncNode{laptop, phone} {
		n.StartSync(t)
		n.Origin = n.Peers().Devices[0].PeerID
	}
	laptop.MustRun(nil, "team", "join", urls, "--user", "alice")
	laptop.MustRun(nil, "team", "share", "syncproj")
	if out := phone.MustRun(nil, "peers", "join", laptop.Invite("2m")); !strings.Contains(out, "Joined") {
		t.Fatalf("phone: join: %s", out)
	}

	const word = "numbatPairedForget"
	laptop.Write(word)
	var id string
	e2ekit.Poll(t, "the laptop's record on the phone", 60*time.Second, func() bool {
		hits := phone.Find(true, word)
		if len(hits) > 0 {
			id = hits[0].ID
		}
		return id != ""
	})
	e2ekit.Poll(t, "the laptop's record on bob", 60*time.Second, func() bool { return bob.Finds(t, word) })
	if n := clusterCount(t, c, `SELECT COUNT(*) FROM team_records WHERE id = ?`, id); n != 1 {
		t.Fatalf("the record is %d times in team_records before the forget", n)
	}

	phone.Forget(true, id)
	e2ekit.Poll(t, "the phone's forget on bob, the laptop and the cluster", 60*time.Second, func() bool {
		return !bob.Finds(t, word) && len(laptop.Find(true, word)) == 0 &&
			clusterCount(t, c, `SELECT COUNT(*) FROM team_records WHERE id = ?`, id) == 0 &&
			clusterCount(t, c, `SELECT COUNT(*) FROM team_ops WHERE record_id = ? AND kind != 'forget' AND payload IS NOT NULL`, id) == 0
	})
	if out := bob.MustRun(nil, "search", word, "--team", "--json"); strings.Contains(out, id) {
		t.Fatalf("search --team still finds the forgotten record: %s", out)
	}
	var st struct {
		Rejected int `json:"rejected"`
	}
	if err := json.Unmarshal([]byte(bob.MustRun(nil, "team", "status", "--json")), &st); err != nil || st.Rejected != 0 {
		t.Fatalf("bob refused %d ops (%v): the laptop's tombstone must be one the team takes", st.Rejected, err)
	}

	// Cut off from the cluster, search --team answers with bob's own results and why.
	const kept = "quollKeptRecord"
	laptop.Write(kept)
	e2ekit.Poll(t, "the laptop's second record on bob", 60*time.Second, func() bool { return bob.Finds(t, kept) })
	c.Nodes[0].Kill(t)
	start := time.Now()
	r := bob.Run(nil, "search", kept, "--team")
	took := time.Since(start)
	if r.Code != 0 || !strings.Contains(r.Stderr, "cluster unreachable (last contact ") || !strings.Contains(r.Stdout, kept) {
		t.Fatalf("search --team cut off: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("search --team with the cluster down: %s (the memnode process included)", took)

	// Blackholed: the node's address accepts connections and never answers. Hooks record as
	// ever, team status and search --team answer with the local state and why.
	ln, err := net.Listen("tcp", c.Nodes[0].HTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, conn)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-accepted
		for _, conn := range held {
			conn.Close()
		}
	})
	start = time.Now()
	bob.Write(t, "dingoWhileCutOff")
	hook := time.Since(start)
	e2ekit.Poll(t, "bob's own record while cut off", 30*time.Second, func() bool { return bob.Finds(t, "dingoWhileCutOff") })
	start = time.Now()
	out := bob.MustRun(nil, "team", "status")
	status := time.Since(start)
	if !strings.Contains(out, "UNREACHABLE") || !strings.Contains(out, "cluster unreachable (last contact ") {
		t.Fatalf("team status blackholed:\n%s", out)
	}
	start = time.Now()
	r = bob.Run(nil, "search", kept, "--team")
	if r.Code != 0 || !strings.Contains(r.Stderr, "cluster unreachable (last contact ") || !strings.Contains(r.Stdout, kept) {
		t.Fatalf("search --team blackholed: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	t.Logf("blackholed: hook %s, team status %s, search --team %s (each a memnode process)", hook, status, time.Since(start))
}

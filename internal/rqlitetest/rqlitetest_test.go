package rqlitetest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestThreeNodesElectAnotherLeaderAfterKill9 starts a real 3-node cluster, kills its leader
// with SIGKILL and waits for the two others to agree on a new one; the killed node rejoins.
func TestThreeNodesElectAnotherLeaderAfterKill9(t *testing.T) {
	c := Start(t, Options{Nodes: 3, Users: []User{{Username: "reader", Password: "pw", Perms: []string{"query"}}}})
	old := c.WaitLeader(t, 30*time.Second)
	for _, n := range c.Nodes {
		if got := n.LeaderID(); got != old.ID {
			t.Fatalf("%s names leader %q, want %q", n.ID, got, old.ID)
		}
	}
	old.Kill(t)
	if old.Running() {
		t.Fatal("killed node still running")
	}
	nl := c.WaitLeader(t, 30*time.Second)
	if nl.ID == old.ID {
		t.Fatalf("leader is still the killed node %s", old.ID)
	}
	old.Restart(t)
	if l := c.WaitLeader(t, 30*time.Second); l == nil || !old.Running() {
		t.Fatal("restarted node did not rejoin")
	}
}

// TestAuthFileIsEnforced: the cluster runs with the auth file, so a request without
// credentials is refused.
func TestAuthFileIsEnforced(t *testing.T) {
	c := Start(t, Options{})
	resp, err := http.Get(c.Nodes[0].URL() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous /status: %d, want 401", resp.StatusCode)
	}
	if code := c.Nodes[0].get("/status"); code != http.StatusOK {
		t.Fatalf("admin /status: %d", code)
	}
	if !strings.HasPrefix(c.Nodes[0].URL(), "http://127.0.0.1:") {
		t.Fatalf("node not on loopback: %s", c.Nodes[0].URL())
	}
}

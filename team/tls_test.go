package team

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
)

// TestTeamOverHTTPSWithATestCA: a real rqlited serving its HTTP API over HTTPS
// (-http-cert/-http-key, a certificate for 127.0.0.1 from a CA made by the test): members
// that were given the CA at join share a project and search the cluster; a member without
// the CA is refused with a line that says what to do, and nothing of its password crossed.
func TestTeamOverHTTPSWithATestCA(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users(), TLS: true})
	if !strings.HasPrefix(c.URLs()[0], "https://127.0.0.1:") {
		t.Fatalf("cluster URL %s, want https on loopback", c.URLs()[0])
	}
	ctx := context.Background()
	const P = "billing"
	a, b := newMember(t, "alice", "laptop"), newMember(t, "bob", "desktop")
	for _, x := range []*member{a, b} {
		x.join(t, c, P)
		x.t.Start(ctx)
	}
	a.record(t, P, "TLS record from alice")
	testkit.WaitFor(t, "alice's record on bob over https", 30*time.Second, func() bool { return b.has(t, "TLS record from alice") })
	if hits, err := b.t.Search(ctx, "TLS record", "", 10); err != nil || len(hits) != 1 || hits[0].Author != "alice/laptop" {
		t.Fatalf("search --team over https: %+v %v", hits, err)
	}

	m := newMember(t, "carol", "x")
	_, err := m.t.Join(ctx, JoinRequest{URLs: c.URLs(), User: "carol", Password: testPassword})
	if !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "--ca-cert") {
		t.Fatalf("join without the CA: %v, want ErrUntrusted naming --ca-cert", err)
	}
	if _, err := m.t.Join(ctx, JoinRequest{URLs: c.URLs(), User: "carol", Password: testPassword, CACert: []byte("not a certificate")}); err == nil || !strings.Contains(err.Error(), "not PEM") {
		t.Fatalf("join with a CA that is not PEM: %v", err)
	}
}

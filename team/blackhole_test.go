package team

import (
	"context"
	"database/sql"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
)

// blackhole is a listener on 127.0.0.1 that accepts connections and never answers: a
// cluster cut off by a firewall that drops, or a SIGSTOPped node.
func blackhole(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestTeamStatusAndSearchAnswerWhenTheClusterIsBlackholed: a member joined to a real
// cluster whose URLs then lead to nodes that accept and never answer (request timeout one
// hour) gets team status and team search back within AnswerWithin, saying "cluster
// unreachable (last contact …)", with its local state (shared projects, backlog) intact.
func TestTeamStatusAndSearchAnswerWhenTheClusterIsBlackholed(t *testing.T) {
	testkit.LeakCheck(t)
	c := rqlitetest.Start(t, rqlitetest.Options{Nodes: 1, Users: users()})
	ctx := context.Background()
	a := newTunedMember(t, "alice", "laptop", func(cfg *Config) { cfg.Timeout = time.Hour })
	a.join(t, c, "billing")
	a.record(t, "billing", "recorded while cut off")
	if err := a.t.Close(); err != nil {
		t.Fatal(err)
	}
	state := a.t.cfg.StatePath
	db, err := sql.Open("sqlite3", "file:"+state)
	if err != nil {
		t.Fatal(err)
	}
	holes := blackhole(t) + "," + blackhole(t) + "," + blackhole(t)
	if _, err := db.Exec(`UPDATE config SET value = ? WHERE key = 'urls'`, holes); err != nil {
		t.Fatal(err)
	}
	db.Close()
	cfg := a.t.cfg
	cfg.Password = func() string { return testPassword }
	tm, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	start := time.Now()
	st, err := tm.Status(ctx)
	t.Logf("team status with 3 blackholed nodes: %v (bound %v)", time.Since(start), cfg.AnswerWithin)
	if err != nil || st.Reachable || !strings.Contains(st.LastError, "cluster unreachable (last contact never since the node started)") ||
		len(st.Shared) != 1 || st.PushBacklog == 0 {
		t.Fatalf("status: %+v %v", st, err)
	}
	start = time.Now()
	_, err = tm.Search(ctx, "recorded", "", 10)
	t.Logf("team search with 3 blackholed nodes: %v", time.Since(start))
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "cluster unreachable (last contact") {
		t.Fatalf("search: %v", err)
	}
}

//go:build !memnode_lean

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/localnet"
	"github.com/memnode/memnode/replica"
	memsync "github.com/memnode/memnode/sync"
)

type peersReadyBackend struct{}

func (peersReadyBackend) Ready() bool { return true }
func (peersReadyBackend) Ingest(context.Context, apitype.Event) (apitype.EventReply, error) {
	return apitype.EventReply{}, nil
}
func (peersReadyBackend) Context(context.Context, string, string) (apitype.Context, error) {
	return apitype.Context{}, nil
}
func (peersReadyBackend) ObservationsByFile(context.Context, string, []string, int) ([]apitype.FileObservation, error) {
	return nil, nil
}
func (peersReadyBackend) Status(context.Context) (apitype.Status, error) {
	return apitype.Status{}, nil
}

// peersNode is a device for the CLI to talk to: a real replica, a real sync node and the real
// API on a 127.0.0.1 port, with a token file in its data dir as the daemon writes it.
func peersNode(t *testing.T, name string) *cliEnv {
	t.Helper()
	dir := t.TempDir()
	_, id, err := memsync.LoadOrCreateIdentity(filepath.Join(dir, "identity.key"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replica.Open(context.Background(), replica.Config{Path: filepath.Join(dir, "memnode.db"), Origin: id.String()})
	if err != nil {
		t.Fatal(err)
	}
	n, err := memsync.New(memsync.Config{DataDir: dir, DeviceName: name, Store: rep, JoinRetry: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Config{Addr: "127.0.0.1:0", Socket: localnet.SocketPath(dir), Token: "tok-" + name, Backend: peersReadyBackend{}, Peers: n})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close(context.Background())
		n.Close()
		rep.Close()
	})
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok-"+name+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(srv.Addr())
	settings := configs.Default()
	settings.Port, _ = strconv.Atoi(port)
	return &cliEnv{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }, DataDir: dir, Settings: settings}
}

func outOf(env *cliEnv) string { return env.Stdout.(*bytes.Buffer).String() }
func errOf(env *cliEnv) string { return env.Stderr.(*bytes.Buffer).String() }

func TestCmdPeersInviteJoinListRemove(t *testing.T) {
	ctx := context.Background()
	a, b := peersNode(t, "laptop"), peersNode(t, "desktop")
	if code := cmdPeers(ctx, a, []string{"invite", "--ttl", "5m"}); code != 0 {
		t.Fatalf("invite: %d %s", code, errOf(a))
	}
	code := strings.Fields(outOf(a))[0]
	if !strings.HasPrefix(code, "MN1") || !strings.Contains(outOf(a), "memnode peers join "+code) {
		t.Fatalf("invite output: %q", outOf(a))
	}
	if rc := cmdPeers(ctx, b, []string{"join", "MN1WRONG"}); rc != 1 || !strings.Contains(errOf(b), "malformed") {
		t.Fatalf("bad code: %d %q", rc, errOf(b))
	}
	b.Stdin = strings.NewReader(code + "\n") // the code on stdin keeps it out of shell history
	if rc := cmdPeers(ctx, b, []string{"join"}); rc != 0 {
		t.Fatalf("join: %d %s", rc, errOf(b))
	}
	var st memsync.Status
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.Stdout.(*bytes.Buffer).Reset()
		if rc := cmdPeers(ctx, a, []string{"status", "--json"}); rc != 0 {
			t.Fatalf("status: %d %s", rc, errOf(a))
		}
		if err := json.Unmarshal([]byte(outOf(a)), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Devices) == 2 && st.Devices[1].State == memsync.StateAlive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("desktop never alive: %s", outOf(a))
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
	a.Stdout.(*bytes.Buffer).Reset()
	if rc := cmdPeers(ctx, a, nil); rc != 0 || !strings.Contains(outOf(a), "laptop (this device)") || !strings.Contains(outOf(a), "desktop") {
		t.Fatalf("list: %d %s", rc, outOf(a))
	}
	a.Stdout.(*bytes.Buffer).Reset()
	if rc := cmdPeers(ctx, a, []string{"remove", "desktop"}); rc != 0 || !strings.Contains(outOf(a), "Removed desktop") {
		t.Fatalf("remove: %d %s %s", rc, outOf(a), errOf(a))
	}
	if rc := cmdPeers(ctx, a, []string{"remove", "desktop"}); rc != 1 || !strings.Contains(errOf(a), "no such device") {
		t.Fatalf("remove again: %d %s", rc, errOf(a))
	}
	if rc := cmdPeers(ctx, a, []string{"frobnicate"}); rc != 2 {
		t.Fatalf("unknown subcommand: %d", rc)
	}
}

// TestPeersShowCatchUp: a device catching up shows how many ops it has of how many it
// knows of and what is left to pull, and "unknown yet" before a peer announced anything —
// never 0 pending while ops are still to arrive — and the rows of a snapshot it installs.
func TestPeersShowCatchUp(t *testing.T) {
	render := func(st memsync.Status) string {
		var b strings.Builder
		printPeers(&b, st)
		return b.String()
	}
	self := memsync.PeerStatus{Name: "new", ShortID: "aaa", State: memsync.StateAlive, Self: true}
	old := memsync.PeerStatus{Name: "old", ShortID: "bbb", State: memsync.StateAlive}
	out := render(memsync.Status{Devices: []memsync.PeerStatus{self, old}})
	if !strings.Contains(out, "unknown yet") || regexp.MustCompile(`old\s+bbb\s+alive\s+\S+\s+0\s`).MatchString(out) {
		t.Errorf("before the first session:\n%s", out)
	}
	old.Compared, old.Ahead = true, 28000
	out = render(memsync.Status{Devices: []memsync.PeerStatus{self, old}, OpsHeld: 2000, OpsKnown: 30000})
	if !strings.Contains(out, "catching up: 2000 of 30000 ops here, 28000 to pull") || !regexp.MustCompile(`old\s+bbb\s+alive\s+-\s+28000\s+0\s`).MatchString(out) {
		t.Errorf("while catching up:\n%s", out)
	}
	snap := &memsync.SnapshotStatus{Rows: 12000, Total: 40000}
	if out = render(memsync.Status{Devices: []memsync.PeerStatus{self, old}, OpsHeld: 1, OpsKnown: 30001, Snapshot: snap}); !strings.Contains(out, "catching up: 1 of 30001 ops here, 30000 to pull; snapshot: 12000 of 40000 rows installed") {
		t.Errorf("while installing a snapshot:\n%s", out)
	}
	old.Ahead = 0
	if out = render(memsync.Status{Devices: []memsync.PeerStatus{self, old}, OpsHeld: 30000, OpsKnown: 30000, Snapshot: snap}); !strings.Contains(out, "catching up: snapshot: 12000 of 40000 rows installed") {
		t.Errorf("a snapshot install with every op known:\n%s", out)
	}
	if out = render(memsync.Status{Devices: []memsync.PeerStatus{self, old}, OpsHeld: 30000, OpsKnown: 30000}); strings.Contains(out, "catching up") {
		t.Errorf("caught up:\n%s", out)
	}
}

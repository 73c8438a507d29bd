//go:build !memnode_lean

package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/localnet"
)

// startingBackend is a node's API backend during a start: each /health answer takes the
// start one step on (so progress follows the polls, not the clock) until readyAfter steps,
// or never when stuck.
type startingBackend struct {
	peersReadyBackend
	steps      atomic.Uint64
	readyAfter uint64
	stuck      bool
	migrating  bool        // one unbounded phase until ready is set
	ready      atomic.Bool // for migrating
}

func (b *startingBackend) Ready() bool {
	if b.migrating {
		return b.ready.Load()
	}
	return !b.stuck && b.steps.Load() >= b.readyAfter
}

func (b *startingBackend) StartPhase() (string, uint64, bool) {
	switch {
	case b.stuck:
		return "checking the database", 3, false
	case b.migrating:
		// One long migration: no step, unbounded, until ready.
		return "migrating the database to schema 13", 3, true
	}
	n := b.steps.Add(1)
	if n < b.readyAfter/2 {
		return "checking the database", n, false
	}
	return "migrating the database to schema 11", n, false
}

// startingNode serves the real API with b on a socket in a temp data dir, as a starting
// node would, and returns the CLI env that reaches it.
func startingNode(t *testing.T, b *startingBackend) *cliEnv {
	t.Helper()
	dir := t.TempDir()
	srv, err := api.New(api.Config{Addr: "127.0.0.1:0", Socket: localnet.SocketPath(dir), Token: "tok", Backend: b})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(srv.Addr())
	settings := configs.Default()
	settings.Port, _ = strconv.Atoi(port)
	return &cliEnv{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(string) string { return "" }, DataDir: dir, Settings: settings}
}

// TestStartWaitsWhileTheStartMovesOn (issue 29): a start that takes several times the stall
// bound is waited out as long as /health reports new steps, and start says what the node is
// doing — each phase once.
func TestStartWaitsWhileTheStartMovesOn(t *testing.T) {
	const stall = 300 * time.Millisecond
	b := &startingBackend{readyAfter: 120} // ≥ 1.2 s of 10 ms polls: 4× the stall bound
	env := startingNode(t, b)
	var said bytes.Buffer
	t0 := time.Now()
	if err := (startWait{noAnswer: time.Minute, stall: stall, say: &said}).wait(context.Background(), env, nil); err != nil {
		t.Fatalf("wait: %v (after %s, %d steps)", err, time.Since(t0), b.steps.Load())
	}
	if took := time.Since(t0); took <= stall {
		t.Fatalf("the start was ready after %s, within the stall bound: the test shows nothing", took)
	}
	if got := said.String(); got != "memnode start: checking the database…\nmemnode start: migrating the database to schema 11…\n" {
		t.Fatalf("start said %q", got)
	}
}

// TestStartGivesUpOnAStalledStart: a node that answers but stays on one step fails the wait
// after the stall bound, naming what it was doing.
func TestStartGivesUpOnAStalledStart(t *testing.T) {
	env := startingNode(t, &startingBackend{stuck: true})
	err := (startWait{noAnswer: time.Minute, stall: 300 * time.Millisecond}).wait(context.Background(), env, nil)
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no progress for 300ms while checking the database") {
		t.Fatalf("wait on a stalled start: %v", err)
	}
}

// TestStartWaitsOutALongMigration: a schema migration is one SQL script with no step between
// (an FTS rebuild at 1M observations takes minutes): the node reports it unbounded, and
// start waits past the stall bound until the node is ready.
func TestStartWaitsOutALongMigration(t *testing.T) {
	const stall = 200 * time.Millisecond
	b := &startingBackend{migrating: true}
	env := startingNode(t, b)
	res := make(chan error, 1)
	go func() { res <- (startWait{noAnswer: time.Minute, stall: stall}).wait(context.Background(), env, nil) }()
	// Well past the stall bound, the wait still runs.
	select {
	case err := <-res:
		t.Fatalf("the wait ended during the migration: %v", err)
	case <-time.After(5 * stall):
	}
	b.ready.Store(true)
	if err := <-res; err != nil {
		t.Fatalf("wait: %v", err)
	}
}

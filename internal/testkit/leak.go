package testkit

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// leakGrace is how long LeakCheck waits for goroutines to finish after the test: a part
// whose Close returned may still have goroutines on their way out (a closed listener's
// accept loop, say).
const leakGrace = 10 * time.Second

// idle are goroutines that belong to the test's own HTTP clients (idle keep-alive
// connections of http.DefaultTransport), not to the part under test.
var idle = []string{
	"net/http.(*persistConn).readLoop",
	"net/http.(*persistConn).writeLoop",
}

// LeakCheck fails the test if goroutines it started are still running when it ends
// (tailscale's tstest.ResourceCheck is the model). Call it first in the test, so its
// check runs after every other cleanup (Close of the parts the test started); it does not
// work in parallel tests, whose goroutines it cannot tell apart.
func LeakCheck(tb testing.TB) {
	tb.Helper()
	leakCheck(tb, leakGrace)
}

func leakCheck(tb testing.TB, grace time.Duration) {
	before := goroutines()
	tb.Cleanup(func() {
		if tb.Failed() {
			return // the failure is what matters; its parts may not have closed
		}
		deadline := time.Now().Add(grace)
		for {
			leaked := newGoroutines(before, goroutines())
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				tb.Errorf("%d goroutines still running %s after the test:\n\n%s", len(leaked), grace, strings.Join(leaked, "\n\n"))
				return
			}
			time.Sleep(pollEvery)
		}
	})
}

// goroutines returns the stack of every goroutine, by goroutine ID.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := make(map[string]string)
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		// "goroutine 123 [running]:\n..."
		fields := strings.Fields(string(g))
		if len(fields) < 2 || fields[0] != "goroutine" {
			continue
		}
		out[fields[1]] = string(g)
	}
	return out
}

// newGoroutines lists the stacks in now that are not in before, skipping the calling
// goroutine and the test's own idle HTTP connections.
func newGoroutines(before, now map[string]string) []string {
	var out []string
	for id, stack := range now {
		if _, ok := before[id]; ok || isIgnored(stack) {
			continue
		}
		out = append(out, stack)
	}
	return out
}

func isIgnored(stack string) bool {
	if strings.Contains(stack, "internal/testkit.goroutines") {
		return true // the goroutine taking the snapshot
	}
	for _, s := range idle {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}

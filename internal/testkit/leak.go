package testkit

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
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

// leakLabel is the pprof label LeakCheck puts on the test's goroutine. The runtime copies
// a goroutine's labels to every goroutine it starts, so every goroutine the test started,
// directly or through goroutines that have since ended, carries the test's own value.
const leakLabel = "memnode_leakcheck"

// LeakCheck fails the test if goroutines it started are still running when it ends
// (tailscale's tstest.ResourceCheck is the model). Call it first in the test, on the test's
// own goroutine, so its check runs after every other cleanup (Close of the parts the test
// started). It labels the test's goroutine (pprof labels, which every goroutine inherits
// from the one that starts it) and, at cleanup, looks only at goroutines with that label:
// tests that run in parallel (t.Parallel) do not see each other's goroutines.
func LeakCheck(tb testing.TB) {
	tb.Helper()
	leakCheck(tb, leakGrace)
}

func leakCheck(tb testing.TB, grace time.Duration) {
	// One value per call: a test that calls LeakCheck again (a helper that starts a part
	// and checks it, called in a loop) checks at each cleanup only what it started after
	// that call, and the cleanup stops those parts first (cleanups run last in, first out).
	// mark lives until the cleanup that holds it has run, so its address is not reused.
	mark := new(byte)
	id := fmt.Sprintf("%s@%p", tb.Name(), mark)
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels(leakLabel, id)))
	tb.Cleanup(func() {
		runtime.KeepAlive(mark)
		if tb.Failed() {
			return // the failure is what matters; its parts may not have closed
		}
		deadline := time.Now().Add(grace)
		for {
			leaked := labelled(id)
			if len(leaked) == 0 {
				return
			}
			if time.Now().After(deadline) {
				tb.Errorf("%d goroutines still running %s after the test:\n\n%s", count(leaked), grace, strings.Join(leaked, "\n\n"))
				return
			}
			time.Sleep(pollEvery)
		}
	})
}

// labelled returns the stacks of the goroutines that carry the label value id (from the
// goroutine profile: one entry per distinct stack, with its count), skipping the goroutine
// taking the snapshot and the test's own idle HTTP connections.
func labelled(id string) []string {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		return []string{"read the goroutine profile: " + err.Error()}
	}
	want := fmt.Sprintf("%q:%q", leakLabel, id)
	var out []string
	// "N @ 0x… 0x…\n# labels: {"k":"v", …}\n#\t0x…\tpkg.fn+0x…\tfile:line\n…", entries
	// separated by a blank line.
	for _, g := range strings.Split(buf.String(), "\n\n") {
		if labels := labelLine(g); strings.Contains(labels, want) && !isIgnored(g) {
			out = append(out, g)
		}
	}
	return out
}

// count is how many goroutines the profile entries stand for: an entry is one stack, led
// by the number of goroutines on it ("4 @ 0x…"; the first entry after the profile's header).
func count(entries []string) int {
	n := 0
	for _, e := range entries {
		k := 1
		for _, l := range strings.Split(e, "\n") {
			if _, err := fmt.Sscanf(l, "%d @", &k); err == nil {
				break
			}
		}
		n += k
	}
	return n
}

// labelLine is the "# labels: " line of one goroutine profile entry, or "".
func labelLine(entry string) string {
	for _, l := range strings.Split(entry, "\n") {
		if strings.HasPrefix(l, "# labels: ") {
			return l
		}
	}
	return ""
}

func isIgnored(stack string) bool {
	if strings.Contains(stack, "internal/testkit.labelled") {
		return true // the goroutine taking the snapshot
	}
	for _, s := range idle {
		if strings.Contains(stack, s) {
			return true
		}
	}
	return false
}

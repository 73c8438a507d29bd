// Package testutil holds helpers shared by memnode's tests.
package testutil

import (
	"testing"
	"time"
)

// WaitFor polls cond every few milliseconds until it holds, failing the test after timeout.
// Tests use it instead of sleeping: it returns as soon as the condition is true.
func WaitFor(tb testing.TB, what string, timeout time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

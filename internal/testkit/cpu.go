package testkit

import (
	"syscall"
	"testing"
	"time"
)

// ProcessCPU is the user+system CPU time this process has used; benchmarks report CPU per
// operation from it, which a loaded machine skews far less than wall time.
func ProcessCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

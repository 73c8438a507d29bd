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
	return rusageCPU(tb, syscall.RUSAGE_SELF)
}

// ChildrenCPU is the user+system CPU time of this process's children that have been waited
// for: what the processes a benchmark runs (hooks, CLIs) cost.
func ChildrenCPU(tb testing.TB) time.Duration {
	tb.Helper()
	return rusageCPU(tb, syscall.RUSAGE_CHILDREN)
}

func rusageCPU(tb testing.TB, who int) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

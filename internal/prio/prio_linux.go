package prio

import (
	"runtime"
	"syscall"
)

// backgroundNice is the scheduling niceness of the threads that run background work.
const backgroundNice = 10

// Lower pins the calling goroutine to its OS thread and lowers that thread's CPU
// priority, so background work (compressing queued events, embedding) yields the CPU to
// what a person waits on: hook acknowledgements, context and search requests. The
// goroutine must keep the lock until it returns — the runtime then retires the thread
// instead of handing a lowered thread to other goroutines.
func Lower() error {
	runtime.LockOSThread()
	// On Linux, PRIO_PROCESS with a thread ID sets that thread's niceness alone.
	return syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), backgroundNice)
}

package prio

import (
	"runtime"
	"syscall"
)

// backgroundNice is the scheduling niceness of the threads that run background work.
const backgroundNice = 10

// Lower pins the calling goroutine to its OS thread and lowers that thread's CPU
// priority, so background work (compressing queued events, embedding) yields the CPU to
// what a person waits on: the node's answers to hooks, context and search requests. The
// goroutine must keep the lock until it returns — the runtime then retires the thread
// instead of handing a lowered thread to other goroutines.
//
// Niceness orders threads within one scheduling group. With the kernel's autogroups (on in
// most desktop distributions) a daemon in its own session is one group, so a lowered thread
// does not yield to other processes, such as the hook processes an IDE starts.
func Lower() error {
	runtime.LockOSThread()
	// On Linux, PRIO_PROCESS with a thread ID sets that thread's niceness alone.
	return syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), backgroundNice)
}

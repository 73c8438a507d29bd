package prio

import (
	"runtime"
	"syscall"
	"testing"
)

// threadNice is the niceness of the calling thread (the raw syscall answers 20 - nice).
func threadNice(t *testing.T) int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

func TestUnloweredRunsAtNormalPriority(t *testing.T) {
	base := make(chan int)
	go func() { runtime.LockOSThread(); defer runtime.UnlockOSThread(); base <- threadNice(t) }()
	normal := <-base
	got := make(chan [2]int)
	go func() {
		if err := Lower(); err != nil {
			t.Error(err)
		}
		lowered := threadNice(t)
		var inside int
		Unlowered(func() {
			runtime.LockOSThread() // read the niceness of the thread f really runs on
			defer runtime.UnlockOSThread()
			inside = threadNice(t)
		})
		got <- [2]int{lowered, inside}
	}()
	r := <-got
	if r[0] != normal+backgroundNice && r[0] != 19 {
		t.Fatalf("lowered thread nice = %d, want %d", r[0], normal+backgroundNice)
	}
	if r[1] != normal {
		t.Fatalf("Unlowered ran at nice %d, want the normal %d", r[1], normal)
	}
}

// Package prio lowers the CPU priority of background threads and keeps the SQLite writer
// off them.
package prio

// Unlowered runs f on a fresh goroutine and waits for it. A goroutine that called Lower is
// locked to its lowered thread, and the runtime never runs another goroutine there, so f
// runs at normal priority: background work holding the single SQLite writer must not be
// the niced thread that forget or save from the API waits behind (priority inversion).
func Unlowered(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

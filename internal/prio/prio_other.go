//go:build !linux

package prio

// Lower does nothing outside Linux, where niceness is per process.
func Lower() error { return nil }

//go:build !linux

package node

// lowerPriority does nothing outside Linux, where niceness is per process.
func lowerPriority() error { return nil }

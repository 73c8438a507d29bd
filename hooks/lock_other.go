//go:build !unix

package hooks

import "os"

// Without flock a rotation can race an append on these platforms; the node drains only at
// start, when hooks rarely run, so the window is small.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) {}

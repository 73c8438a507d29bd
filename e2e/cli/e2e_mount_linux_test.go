package cli

import "syscall"

// mountTmpfs mounts a tmpfs of opts ("size=2m,mode=0700") on dir (root only); unmountTmpfs
// undoes it. Linux only: the darwin twin lets `make lint` compile the tests for macOS.
func mountTmpfs(dir, opts string) error { return syscall.Mount("tmpfs", dir, "tmpfs", 0, opts) }

func unmountTmpfs(dir string) error { return syscall.Unmount(dir, 0) }

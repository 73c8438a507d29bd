//go:build !linux

package cli

import "errors"

func mountTmpfs(string, string) error { return errors.New("tmpfs mounts are Linux only") }

func unmountTmpfs(string) error { return nil }

//go:build !linux

package keys

import "errors"

type kernelRing struct{}

func openKernel(string) (*kernelRing, error) {
	return nil, errors.New("the kernel keyring exists only on Linux")
}

func (*kernelRing) describe() string           { return "" }
func (*kernelRing) set(string, string) error   { return ErrNoStore }
func (*kernelRing) get(string) (string, error) { return "", ErrNoStore }
func (*kernelRing) del(string) error           { return ErrNoStore }

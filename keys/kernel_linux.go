package keys

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// kernelRing keeps keys as "user" keys in the Linux kernel keyring.
type kernelRing struct {
	ring       int
	persistent bool
	service    string
}

// keyPerm lets the owner's processes (CLI and daemon, possessor or not) view, read, write,
// search, link and set attributes; nobody else gets anything.
const keyPerm = 0x3f3f0000

func openKernel(service string) (*kernelRing, error) {
	k := &kernelRing{ring: unix.KEY_SPEC_USER_KEYRING, service: service}
	if id, err := unix.KeyctlInt(unix.KEYCTL_GET_PERSISTENT, -1, unix.KEY_SPEC_USER_KEYRING, 0, 0); err == nil {
		k.ring, k.persistent = id, true
	}
	// Probe: write, read back, remove. Seccomp profiles (e.g. Docker's default) block keyctl.
	if err := k.set("probe", "probe"); err != nil {
		return nil, err
	}
	v, err := k.get("probe")
	_ = k.del("probe")
	if err != nil || v != "probe" {
		return nil, fmt.Errorf("kernel keyring read-back failed: %v", err)
	}
	return k, nil
}

func (k *kernelRing) describe() string {
	if k.persistent {
		return "linux kernel keyring (persistent; cleared at reboot)"
	}
	return "linux kernel keyring (user; cleared at reboot)"
}

func (k *kernelRing) desc(p string) string { return k.service + ":" + p }

func (k *kernelRing) set(p, v string) error {
	id, err := unix.AddKey("user", k.desc(p), []byte(v), k.ring)
	if err != nil {
		return fmt.Errorf("kernel keyring add: %w", err)
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_SETPERM, id, keyPerm, 0, 0); err != nil {
		return fmt.Errorf("kernel keyring setperm: %w", err)
	}
	return nil
}

func (k *kernelRing) find(p string) (int, error) {
	id, err := unix.KeyctlSearch(k.ring, "user", k.desc(p), 0)
	if errors.Is(err, unix.ENOKEY) || errors.Is(err, unix.EKEYREVOKED) || errors.Is(err, unix.EKEYEXPIRED) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("kernel keyring search: %w", err)
	}
	return id, nil
}

func (k *kernelRing) get(p string) (string, error) {
	id, err := k.find(p)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 512)
	for {
		n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
		if err != nil {
			return "", fmt.Errorf("kernel keyring read: %w", err)
		}
		if n <= len(buf) {
			return string(buf[:n]), nil
		}
		buf = make([]byte, n)
	}
}

func (k *kernelRing) del(p string) error {
	id, err := k.find(p)
	if err != nil {
		return err
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0); err != nil {
		if _, err := unix.KeyctlInt(unix.KEYCTL_UNLINK, id, k.ring, 0, 0); err != nil {
			return fmt.Errorf("kernel keyring unlink: %w", err)
		}
	}
	return nil
}

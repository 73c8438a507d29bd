package keys

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/zalando/go-keyring"
)

func osName() string {
	switch runtime.GOOS {
	case "darwin":
		return "os-keyring (macOS Keychain)"
	case "windows":
		return "os-keyring (Windows Credential Manager)"
	}
	return "os-keyring (Secret Service)"
}

// osKeyring is go-keyring with every call bounded by a timeout: the Secret Service client
// talks D-Bus and can block forever when the bus or the service does not answer.
type osKeyring struct {
	service string
	timeout time.Duration
}

// errTimeout reports an OS keyring call that did not return in time. The goroutine making
// the call cannot be cancelled; it ends when D-Bus gives up.
var errTimeout = errors.New("os keyring did not answer in time")

func withTimeout[T any](d time.Duration, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-t.C:
		var zero T
		return zero, errTimeout
	}
}

// probeOS returns the OS keyring when a lookup of a missing entry answers "not found" in time.
func probeOS(cfg Config) (*osKeyring, error) {
	_, err := withTimeout(cfg.ProbeTimeout, func() (string, error) {
		return keyring.Get(cfg.Service, "memnode-probe")
	})
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return nil, err
	}
	return &osKeyring{service: cfg.Service, timeout: cfg.OpTimeout}, nil
}

func (o *osKeyring) set(p, k string) error {
	_, err := withTimeout(o.timeout, func() (struct{}, error) { return struct{}{}, keyring.Set(o.service, p, k) })
	return mapOSErr(err)
}

func (o *osKeyring) get(p string) (string, error) {
	k, err := withTimeout(o.timeout, func() (string, error) { return keyring.Get(o.service, p) })
	return k, mapOSErr(err)
}

func (o *osKeyring) del(p string) error {
	_, err := withTimeout(o.timeout, func() (struct{}, error) { return struct{}{}, keyring.Delete(o.service, p) })
	return mapOSErr(err)
}

func mapOSErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, keyring.ErrNotFound):
		return ErrNotFound
	}
	return fmt.Errorf("os keyring: %w", err)
}

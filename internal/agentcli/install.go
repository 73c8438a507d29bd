package agentcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Environment variables this package reads (it is test support: the contract of `make test`).
const (
	// EnvCI set to 1 turns every "tool missing" skip into a failure.
	EnvCI = "MEMNODE_CI"
	// EnvCache is the root of the npm install cache.
	EnvCache = "MEMNODE_AGENT_CACHE"
)

// installTimeout bounds one npm install (native CLIs download tens of MB).
const installTimeout = 10 * time.Minute

// completeMarker marks a finished install inside its dir; a dir without it is redone.
const completeMarker = ".memnode-installed"

// Need skips the test with msg (which should say how to get the missing tool), or fails it
// when MEMNODE_CI=1.
func Need(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(EnvCI) == "1" {
		tb.Fatalf("%s (%s=1: a missing tool is a failure)", msg, EnvCI)
	}
	tb.Skip(msg)
}

// CacheDir is the root below which npm packages are installed.
func CacheDir(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv(EnvCache); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		tb.Fatalf("find the cache dir for agent CLIs (set %s): %v", EnvCache, err)
	}
	return filepath.Join(d, "memnode-test", "npm")
}

// Install installs the npm package pkg at version (exact, pinned) into the cache once and
// returns the path of its executable bin.
func Install(tb testing.TB, pkg, version, bin string) string {
	tb.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		Need(tb, "%s@%s needs npm (install Node.js and npm): %v", pkg, version, err)
	}
	if bin == "" || strings.ContainsAny(bin, `/\`) {
		tb.Fatalf("install %s@%s: bad executable name %q", pkg, version, bin)
	}
	return install(tb, npm, pkg, version, filepath.Join("node_modules", ".bin", bin))
}

// Installed returns the path of pkg@version's executable bin and true when the cache holds
// a finished install of it, without npm and without waiting for the install lock; otherwise
// "" and false (Install then installs it).
func Installed(tb testing.TB, pkg, version, bin string) (string, bool) {
	tb.Helper()
	if bin == "" || strings.ContainsAny(bin, `/\`) {
		return "", false
	}
	return installedAt(CacheDir(tb), pkg, version, filepath.Join("node_modules", ".bin", bin))
}

// installedAt is Installed below root for the file want (relative to the install dir). The
// lock is not needed: the marker is written last, and a dir that has it is never redone.
func installedAt(root, pkg, version, want string) (string, bool) {
	dir, ok := installDir(root, pkg, version)
	if !ok || want == "" {
		return "", false
	}
	exe := filepath.Join(dir, want)
	if _, err := os.Stat(filepath.Join(dir, completeMarker)); err != nil {
		return "", false
	}
	if _, err := os.Stat(exe); err != nil {
		return "", false
	}
	return exe, true
}

// installDir is the dir below root that pkg@version is installed into; false for a name or
// version that is no such dir.
func installDir(root, pkg, version string) (string, bool) {
	if pkg == "" || version == "" || strings.Contains(version, "/") {
		return "", false
	}
	return filepath.Join(root, filepath.FromSlash(pkg)+"@"+version), true
}

// InstallFile installs the npm package pkg at version (exact, pinned) like Install and
// returns the path of file, a slash path inside the package (a library with no
// executable: "axe.min.js" of axe-core, injected into a browser page).
func InstallFile(tb testing.TB, pkg, version, file string) string {
	tb.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		Need(tb, "%s@%s needs npm (install Node.js and npm): %v", pkg, version, err)
	}
	if file == "" || strings.Contains(file, "..") {
		tb.Fatalf("install %s@%s: bad file %q", pkg, version, file)
	}
	return install(tb, npm, pkg, version, filepath.Join("node_modules", filepath.FromSlash(pkg), filepath.FromSlash(file)))
}

func install(tb testing.TB, npm, pkg, version, want string) string {
	tb.Helper()
	path, err := installAt(npm, CacheDir(tb), pkg, version, want)
	var unreachable *registryError
	switch {
	case errors.As(err, &unreachable):
		Need(tb, "install %s@%s: the npm registry is unreachable: %v", pkg, version, err)
	case err != nil:
		tb.Fatalf("install %s@%s: %v", pkg, version, err)
	}
	return path
}

// registryError is an npm failure caused by the network, not by the package.
type registryError struct{ err error }

func (e *registryError) Error() string { return e.err.Error() }
func (e *registryError) Unwrap() error { return e.err }

// networkCodes are npm's error codes for a registry it cannot reach.
var networkCodes = []string{"ENOTFOUND", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH", "ERR_SOCKET_TIMEOUT"}

// installAt does Install's work with the npm executable npm below root; want is the file
// (relative to the install dir) the package must have.
func installAt(npm, root, pkg, version, want string) (string, error) {
	dir, ok := installDir(root, pkg, version)
	if !ok || want == "" {
		return "", fmt.Errorf("bad package %q version %q file %q", pkg, version, want)
	}
	exe := filepath.Join(dir, want)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", fmt.Errorf("create cache dir: %w", err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("open install lock: %w", err)
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return "", fmt.Errorf("take install lock: %w", err)
	}
	defer unlockFile(lock)

	if _, err := os.Stat(filepath.Join(dir, completeMarker)); err == nil {
		if _, err := os.Stat(exe); err != nil {
			return "", fmt.Errorf("package has no %s: %w", want, err)
		}
		return exe, nil
	}
	if err := os.RemoveAll(dir); err != nil { // an interrupted install
		return "", fmt.Errorf("remove unfinished install: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error", pkg+"@"+version)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		err = fmt.Errorf("npm install: %w: %s", err, bytes.TrimSpace(out.Bytes()))
		for _, code := range networkCodes {
			if bytes.Contains(out.Bytes(), []byte(code)) {
				return "", &registryError{err}
			}
		}
		return "", err
	}
	if _, err := os.Stat(exe); err != nil {
		return "", fmt.Errorf("package has no %s: %w", want, err)
	}
	if err := os.WriteFile(filepath.Join(dir, completeMarker), []byte(pkg+"@"+version+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("mark install complete: %w", err)
	}
	return exe, nil
}

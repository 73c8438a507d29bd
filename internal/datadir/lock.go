package datadir

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// The data dir's lock, pid file and permissions: what a running node holds and what start,
// stop and status read about it, here (not in node) so the lean memnode client can use them.

// ErrAlreadyRunning means another node holds the data dir.
var ErrAlreadyRunning = errors.New("another memnode node is running on this data dir")

// PIDInfo is the content of the pid file.
type PIDInfo struct {
	PID       int    `json:"pid"`
	Port      int    `json:"port"`
	StartedAt int64  `json:"started_at"`
	Exe       string `json:"exe"`
}

// Lock takes an exclusive flock on the data dir. The kernel releases it when the process
// dies, so a crashed node never blocks the next one and two nodes never share a data dir.
func Lock(dataDir string) (*os.File, error) {
	f, err := os.OpenFile(Dir(dataDir).Lock(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrAlreadyRunning
		}
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	return f, nil
}

// Held reports whether a running node holds the data dir's lock.
func Held(dataDir string) bool {
	f, err := Lock(dataDir)
	if errors.Is(err, ErrAlreadyRunning) {
		return true
	}
	if err == nil {
		f.Close() // closing the descriptor releases the flock
	}
	return false
}

// LockHolder returns the pid of the process holding the data dir's lock, read from
// /proc/locks (Linux); known is false where the kernel does not tell.
func LockHolder(dataDir string) (pid int, known bool) {
	fi, err := os.Stat(Dir(dataDir).Lock())
	if err != nil {
		return 0, errors.Is(err, fs.ErrNotExist) // no lock file: nobody holds it
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, false
	}
	return lockHolder(string(b), st.Ino), true
}

// lockHolder finds the FLOCK on inode ino in /proc/locks text ("1: FLOCK  ADVISORY  WRITE
// 1234 00:2f:5678 0 EOF"); 0 when nobody holds it. Waiters ("1: -> FLOCK …") are skipped.
func lockHolder(locks string, ino uint64) int {
	if pids := LockHolders(locks, ino, "FLOCK"); len(pids) > 0 {
		return pids[0]
	}
	return 0
}

// LockHolders returns, in order of first appearance and once each, the pids holding a lock
// of one of kinds (FLOCK, POSIX, OFDLCK) on inode ino in /proc/locks text; waiters and
// locks the kernel shows without a pid (-1: OFD locks) are skipped.
func LockHolders(locks string, ino uint64, kinds ...string) []int {
	var pids []int
	for _, line := range strings.Split(locks, "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !slices.Contains(kinds, f[1]) {
			continue
		}
		dev := strings.Split(f[5], ":")
		if len(dev) != 3 || dev[2] != strconv.FormatUint(ino, 10) {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// ReadPIDFile returns the pid file's content.
func ReadPIDFile(dataDir string) (PIDInfo, error) {
	var p PIDInfo
	b, err := os.ReadFile(Dir(dataDir).PID())
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("parse pid file: %w", err)
	}
	return p, nil
}

// Alive reports whether a process with pid exists. Whether it is this data dir's node is
// told by the data dir's lock (LockHolder) or the token proof, never by its argv[0]: a node
// started from a renamed or copied binary is still the node.
func Alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// Secure creates the data dir 0700, or forces an existing one to 0700, and takes group
// and other bits off everything below it (files an older version or a 0022 umask left
// readable): memory, token and keys are the user's alone.
func Secure(dataDir string) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return fmt.Errorf("data dir permissions: %w", err)
	}
	return filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&(fs.ModeSymlink|fs.ModeSocket) != 0 {
			return nil // best effort below the top: a vanished file is fine
		}
		fi, err := d.Info()
		if err != nil || fi.Mode().Perm()&0o077 == 0 {
			return nil
		}
		if err := os.Chmod(path, fi.Mode().Perm()&^0o077); err != nil {
			return fmt.Errorf("tighten permissions of %s: %w", path, err)
		}
		return nil
	})
}

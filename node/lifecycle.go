package node

import (
	"github.com/memnode/memnode/internal/atomicfile"

	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Files in the data dir.
const (
	LockFile     = "memnode.lock"
	PIDFile      = "memnode.pid"
	TokenFile    = "token"
	DBFile       = "memnode.db"
	LogDir       = "logs"
	IdentityFile = "identity.key"
)

// ErrAlreadyRunning means another node holds the data dir.
var ErrAlreadyRunning = errors.New("another memnode node is running on this data dir")

// PIDInfo is the content of the pid file.
type PIDInfo struct {
	PID       int    `json:"pid"`
	Port      int    `json:"port"`
	StartedAt int64  `json:"started_at"`
	Exe       string `json:"exe"`
}

// lock takes an exclusive flock on the data dir. The kernel releases it when the process
// dies, so a crashed node never blocks the next one and two nodes never share a data dir.
func lock(dataDir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dataDir, LockFile), os.O_RDWR|os.O_CREATE, 0o600)
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
	f, err := lock(dataDir)
	if errors.Is(err, ErrAlreadyRunning) {
		return true
	}
	if err == nil {
		f.Close() // closing the descriptor releases the flock
	}
	return false
}

// ReadPIDFile returns the pid file's content.
func ReadPIDFile(dataDir string) (PIDInfo, error) {
	var p PIDInfo
	b, err := os.ReadFile(filepath.Join(dataDir, PIDFile))
	if err != nil {
		return p, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("parse pid file: %w", err)
	}
	return p, nil
}

// ProcessIsNode reports whether pid is alive and is a memnode process. A stale pid file
// whose pid was reused by another program is not trusted.
func ProcessIsNode(pid int) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // no /proc: the signal check is all we have
	}
	args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
	return len(args) > 0 && strings.Contains(filepath.Base(args[0]), "memnode")
}

// loadOrCreateSecret returns the hex secret in file name, creating it (0600) if missing.
func loadOrCreateSecret(dataDir, name string, nbytes int) (string, error) {
	path := filepath.Join(dataDir, name)
	b, err := os.ReadFile(path)
	if err == nil {
		if s := strings.TrimSpace(string(b)); s != "" {
			return s, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	buf := make([]byte, nbytes)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	s := hex.EncodeToString(buf)
	if err := atomicfile.Write(path, []byte(s+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write %s: %w", name, err)
	}
	return s, nil
}

// LoadToken returns the API token of a data dir (what clients send as Bearer).
func LoadToken(dataDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, TokenFile))
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

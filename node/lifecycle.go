package node

import (
	"io/fs"
	"syscall"

	"github.com/memnode/memnode/internal/atomicfile"
	"github.com/memnode/memnode/internal/datadir"

	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrAlreadyRunning means another node holds the data dir (datadir.Lock's error).
var ErrAlreadyRunning = datadir.ErrAlreadyRunning

// sqliteUsers names the other processes that hold SQLite's locks on the database at path
// (POSIX record locks on the file or its -shm, Linux /proc/locks): "pid 1234 (sqlite3)".
// Empty where the kernel does not tell.
func sqliteUsers(path string) string {
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return ""
	}
	var pids []int
	for _, p := range []string{path, path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			for _, pid := range datadir.LockHolders(string(b), st.Ino, "POSIX", "OFDLCK") {
				if pid != os.Getpid() && !slices.Contains(pids, pid) {
					pids = append(pids, pid)
				}
			}
		}
	}
	names := make([]string, len(pids))
	for i, pid := range pids {
		names[i] = "pid " + strconv.Itoa(pid)
		if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			names[i] += " (" + strings.TrimSpace(string(comm)) + ")"
		}
	}
	return strings.Join(names, ", ")
}

// loadOrCreateSecret returns the hex secret in the file at path, creating it (0600) if missing.
func loadOrCreateSecret(path string, nbytes int) (string, error) {
	name := filepath.Base(path)
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

// Package datadir is the layout of a memnode data directory: every file and folder the node,
// the CLI and the hook binary read or write there is named here once. It imports only the
// standard library, so the lean hook binary can use it.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvVar overrides the default data dir.
const EnvVar = "MEMNODE_DATA_DIR"

// Dir is the absolute path of a data directory.
type Dir string

// Resolve returns the data dir: $MEMNODE_DATA_DIR, else ~/.memnode, made absolute.
func Resolve(getenv func(string) string) (Dir, error) {
	dir := getenv(EnvVar)
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find home directory (set %s): %w", EnvVar, err)
		}
		dir = filepath.Join(home, ".memnode")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("data dir %q: %w", dir, err)
	}
	return Dir(abs), nil
}

func (d Dir) join(elem ...string) string {
	return filepath.Join(append([]string{string(d)}, elem...)...)
}

// DB is the replica's SQLite database.
func (d Dir) DB() string { return d.join("memnode.db") }

// QueueDB is the durable event queue's database (replica.QueuePath(DB())).
func (d Dir) QueueDB() string { return d.join("memnode.queue.db") }

// Token holds the API bearer token (0600; never printed).
func (d Dir) Token() string { return d.join("token") }

// PID is the running node's pid file (JSON).
func (d Dir) PID() string { return d.join("memnode.pid") }

// Lock is flocked by the running node.
func (d Dir) Lock() string { return d.join("memnode.lock") }

// Socket is the node's Unix socket (see internal/localnet).
func (d Dir) Socket() string { return d.join("memnode.sock") }

// Settings is the settings file.
func (d Dir) Settings() string { return d.join("settings.json") }

// Identity is the device's libp2p key.
func (d Dir) Identity() string { return d.join("identity.key") }

// Group is the device group's state.
func (d Dir) Group() string { return d.join("group.json") }

// Logs is the folder of log files.
func (d Dir) Logs() string { return d.join("logs") }

// NodeLog is the detached node's log.
func (d Dir) NodeLog() string { return d.join("logs", "memnode.log") }

// HookLog is the hook processes' log.
func (d Dir) HookLog() string { return d.join("logs", "hook.log") }

// Spool holds the events hooks could not deliver.
func (d Dir) Spool() string { return d.join("spool") }

// State holds the hooks' small state files.
func (d Dir) State() string { return d.join("state") }

// HookFailures is the hooks' consecutive-failure counter.
func (d Dir) HookFailures() string { return d.join("state", "hook-failures.json") }

// ContextFiles lists the project directories whose agent context files the node keeps
// (contextfile.Target); uninstall reads it to remove them.
func (d Dir) ContextFiles() string { return d.join("state", "context-files.json") }

// Team is team memory's state: join, shared projects, outbox, pull cursors (team package).
func (d Dir) Team() string { return d.join("team.db") }

// LoginPages holds the pages `memnode viewer --open` hands the browser: each forwards one
// login code, so the code never appears in a command line (readable by every user).
func (d Dir) LoginPages() string { return d.join("login") }

// Models holds the embedding models.
func (d Dir) Models() string { return d.join("models") }

// ErrNoToken means the data dir has no token: the node never ran there.
var ErrNoToken = errors.New("no token in the data dir (start the node with 'memnode start')")

// ReadToken returns the API token. Its content is never printed or logged.
func (d Dir) ReadToken() (string, error) {
	if d == "" {
		return "", ErrNoToken
	}
	b, err := os.ReadFile(d.Token())
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNoToken
	}
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", ErrNoToken
	}
	return tok, nil
}

// Capture is the user's capture switches: pauses and the opt-in project list
// (`memnode pause|resume|track`), read by every hook.
func (d Dir) Capture() string { return d.join("state", "capture.json") }

// ViewerSessions is where the web viewer's browser sessions outlive a node restart (0600;
// hashes of the session IDs and CSRF tokens, never the values the browser holds).
func (d Dir) ViewerSessions() string { return d.join("state", "viewer-sessions.json") }

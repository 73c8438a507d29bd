package localnet

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// ListenUnix listens on the socket at path, replacing a stale one, with the socket file
// 0600. The caller must hold the data dir's lock (so no live node owns the old socket).
// Connections from processes of another uid are closed at once where the kernel tells the
// peer's uid (Linux SO_PEERCRED); elsewhere the 0700 data dir and the 0600 socket keep
// them out.
func ListenUnix(path string, log *slog.Logger) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, ErrSocketPath
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	// The socket file takes its mode from the umask: no window where it is 0755.
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod socket: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &uidListener{Listener: ln, uid: os.Getuid(), log: log}, nil
}

// ListenTCP listens on a loopback TCP address and, where the kernel tells a loopback
// peer's owner (Linux: sock_diag, else /proc/net/tcp), closes every connection from a
// process of another uid before a byte of it is read: a browser cookie or a leaked token
// is of no use to another local user. Where the owner cannot be told (another OS) the
// connection is served and the token, the session cookie and the CSRF token protect it.
func ListenTCP(addr string, log *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &uidListener{Listener: ln, uid: os.Getuid(), log: log, strict: true}, nil
}

// errNoPeerUID means this OS cannot tell a peer's uid at all.
var errNoPeerUID = errors.New("peer uid: not supported on this OS")

// uidListener drops connections whose peer runs as another uid. A strict one (TCP) also
// drops those whose owner it could not find (a peer already gone, a lookup failing).
type uidListener struct {
	net.Listener
	uid    int
	log    *slog.Logger
	strict bool

	mu       sync.Mutex
	lastLog  time.Time
	unlogged int
}

func (l *uidListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		switch {
		case err == nil && uid == l.uid, errors.Is(err, errNoPeerUID):
			return c, nil
		case err != nil && !l.strict:
			return c, nil
		}
		c.Close()
		l.refused(uid, err)
	}
}

// refused logs a refusal, at most once a minute (with how many went unlogged), so a
// flood of connections cannot fill the log.
func (l *uidListener) refused(uid int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if time.Since(l.lastLog) < time.Minute {
		l.unlogged++
		return
	}
	args := []any{"addr", l.Addr().String(), "uid", uid, "also_refused", l.unlogged}
	if err != nil {
		args = append(args, "err", err)
	}
	l.log.Warn("refused a connection from another user", args...)
	l.lastLog, l.unlogged = time.Now(), 0
}

package localnet

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"syscall"
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

// uidListener drops connections whose peer runs as another uid.
type uidListener struct {
	net.Listener
	uid int
	log *slog.Logger
}

func (l *uidListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid != l.uid {
			l.log.Warn("refused a socket connection from another user", "uid", uid)
			c.Close()
			continue
		}
		return c, nil
	}
}

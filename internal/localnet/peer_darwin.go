package localnet

import (
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerUID returns the uid of the process at the other end of a Unix socket: LOCAL_PEERCRED
// (macOS's SO_PEERCRED; getpeereid(3) reads the same). macOS has no /proc/net/tcp, so a
// loopback TCP connection is not checked here: the listener's token proof protects it.
func peerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, errors.New("peer uid: only Unix sockets on macOS")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	var cred *unix.Xucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return -1, err
	}
	if cerr != nil {
		return -1, fmt.Errorf("LOCAL_PEERCRED: %w", cerr)
	}
	return int(cred.Uid), nil
}

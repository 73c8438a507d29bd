package localnet

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// peerUID returns the uid of the process at the other end of c: SO_PEERCRED for a Unix
// socket; for a loopback TCP connection the owner of the peer's socket in /proc/net/tcp*.
func peerUID(c net.Conn) (int, error) {
	switch cc := c.(type) {
	case *net.UnixConn:
		raw, err := cc.SyscallConn()
		if err != nil {
			return -1, err
		}
		var cred *syscall.Ucred
		var cerr error
		if err := raw.Control(func(fd uintptr) {
			cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
		}); err != nil {
			return -1, err
		}
		if cerr != nil {
			return -1, fmt.Errorf("SO_PEERCRED: %w", cerr)
		}
		return int(cred.Uid), nil
	case *net.TCPConn:
		local, lok := c.LocalAddr().(*net.TCPAddr)
		remote, rok := c.RemoteAddr().(*net.TCPAddr)
		if !lok || !rok || !remote.IP.IsLoopback() {
			return -1, errors.New("not a loopback tcp connection")
		}
		// The peer's socket has our remote address as its local one, and ours as its remote.
		return tcpOwner(remote.AddrPort(), local.AddrPort())
	}
	return -1, errors.New("peer uid: unsupported connection type")
}

// tcpOwner returns the uid owning the socket local→remote: sock_diag's exact lookup, or,
// where the kernel lacks inet_diag, the socket's line in /proc/net/tcp or tcp6.
func tcpOwner(local, remote netip.AddrPort) (int, error) {
	uid, err := diagOwner(local, remote)
	if !errors.Is(err, errNoDiag) {
		return uid, err
	}
	return procTCPOwner(local, remote)
}

// procTCPOwner finds the socket local→remote in /proc/net/tcp or tcp6 and returns its uid.
func procTCPOwner(local, remote netip.AddrPort) (int, error) {
	files := []string{"/proc/net/tcp", "/proc/net/tcp6"}
	if local.Addr().Is6() && !local.Addr().Is4In6() {
		files = files[1:]
	}
	for _, name := range files {
		uid, err := scanTCP(name, local, remote)
		if err == nil {
			return uid, nil
		}
	}
	return -1, errors.New("peer socket not found in /proc/net/tcp")
}

func scanTCP(name string, local, remote netip.AddrPort) (int, error) {
	f, err := os.Open(name)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid ...
		fld := strings.Fields(sc.Text())
		if len(fld) < 8 {
			continue
		}
		l, lerr := parseProcAddr(fld[1])
		r, rerr := parseProcAddr(fld[2])
		if lerr != nil || rerr != nil || !sameAddrPort(l, local) || !sameAddrPort(r, remote) {
			continue
		}
		if fld[3] == "06" { // TIME_WAIT: no owner
			return -1, errPeerGone
		}
		return strconv.Atoi(fld[7])
	}
	if err := sc.Err(); err != nil {
		return -1, err
	}
	return -1, errors.New("not found")
}

func sameAddrPort(a, b netip.AddrPort) bool {
	return a.Port() == b.Port() && a.Addr().Unmap() == b.Addr().Unmap()
}

// parseProcAddr decodes "0100007F:9790": the address is in host byte order, 32 bits at a
// time (little-endian on the machines memnode runs on), the port is big-endian hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, errors.New("bad address")
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if len(hexAddr) != 8 && len(hexAddr) != 32 {
		return netip.AddrPort{}, errors.New("bad address length")
	}
	b := make([]byte, len(hexAddr)/2)
	for i := 0; i < len(hexAddr)/8; i++ {
		w, err := strconv.ParseUint(hexAddr[i*8:i*8+8], 16, 32)
		if err != nil {
			return netip.AddrPort{}, err
		}
		b[i*4], b[i*4+1], b[i*4+2], b[i*4+3] = byte(w), byte(w>>8), byte(w>>16), byte(w>>24)
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(a, uint16(port)), nil
}

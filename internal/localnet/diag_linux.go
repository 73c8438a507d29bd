package localnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"
)

// Netlink sock_diag (linux/inet_diag.h): one request for the socket with an exact 4-tuple
// answers its owner's uid in a few microseconds, where a scan of /proc/net/tcp reads every
// TCP socket on the machine.
const (
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	nlmsgHdrLen      = 16
	diagReqLen       = 56 // struct inet_diag_req_v2
	diagMsgUIDOff    = 64 // offset of idiag_uid in struct inet_diag_msg
)

// tcpTimeWait is TCP_TIME_WAIT: a peer that already closed its socket, which the kernel
// keeps as a timewait entry without an owner.
const tcpTimeWait = 6

// errPeerGone means the peer's socket is closed or gone: its owner cannot be told.
var errPeerGone = errors.New("peer socket closed: owner unknown")

// errNoDiag means the kernel cannot answer sock_diag (no inet_diag module): callers fall
// back to /proc/net/tcp.
var errNoDiag = errors.New("sock_diag unavailable")

// diagOwner asks the kernel for the uid owning the TCP socket local→remote.
func diagOwner(local, remote netip.AddrPort) (int, error) {
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	remote = netip.AddrPortFrom(remote.Addr().Unmap(), remote.Port())
	family := byte(syscall.AF_INET)
	if local.Addr().Is6() {
		family = syscall.AF_INET6
	}
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.NETLINK_INET_DIAG)
	if err != nil {
		return -1, fmt.Errorf("%w: %w", errNoDiag, err)
	}
	defer syscall.Close(fd)
	// A reply that never comes must not hang Accept.
	tv := syscall.Timeval{Sec: 1}
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)

	req := make([]byte, nlmsgHdrLen+diagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], sockDiagByFamily)
	ne.PutUint16(req[6:], syscall.NLM_F_REQUEST)
	ne.PutUint32(req[8:], 1) // seq
	r := req[nlmsgHdrLen:]
	r[0] = family
	r[1] = syscall.IPPROTO_TCP
	ne.PutUint32(r[4:], 0xffffffff) // any state
	id := r[8:]                     // struct inet_diag_sockid
	binary.BigEndian.PutUint16(id[0:], local.Port())
	binary.BigEndian.PutUint16(id[2:], remote.Port())
	la, ra := local.Addr().As16(), remote.Addr().As16()
	if family == syscall.AF_INET {
		copy(id[4:8], la[12:])
		copy(id[20:24], ra[12:])
	} else {
		copy(id[4:20], la[:])
		copy(id[20:36], ra[:])
	}
	// idiag_if 0; idiag_cookie INET_DIAG_NOCOOKIE (any socket).
	ne.PutUint32(id[40:], 0xffffffff)
	ne.PutUint32(id[44:], 0xffffffff)
	if err := syscall.Sendto(fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return -1, fmt.Errorf("%w: %w", errNoDiag, err)
	}
	buf := make([]byte, 512)
	n, _, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil {
		return -1, fmt.Errorf("%w: %w", errNoDiag, err)
	}
	return parseDiagReply(buf[:n])
}

// parseDiagReply reads the first message of a sock_diag answer: the socket's uid, or the
// kernel's error (ENOENT: no such socket).
func parseDiagReply(b []byte) (int, error) {
	ne := binary.NativeEndian
	if len(b) < nlmsgHdrLen {
		return -1, errors.New("sock_diag: short reply")
	}
	l := int(ne.Uint32(b[0:]))
	if l < nlmsgHdrLen || l > len(b) {
		return -1, errors.New("sock_diag: bad reply length")
	}
	body := b[nlmsgHdrLen:l]
	switch ne.Uint16(b[4:]) {
	case syscall.NLMSG_ERROR:
		if len(body) < 4 {
			return -1, errors.New("sock_diag: short error")
		}
		errno := -int32(ne.Uint32(body))
		if errno == int32(syscall.ENOENT) {
			return -1, errors.New("sock_diag: peer socket not found")
		}
		return -1, fmt.Errorf("%w: %w", errNoDiag, syscall.Errno(errno))
	case sockDiagByFamily:
		if len(body) < diagMsgUIDOff+4 {
			return -1, errors.New("sock_diag: short message")
		}
		if body[1] == tcpTimeWait {
			// A timewait socket carries no owner (the kernel reports uid 0).
			return -1, errPeerGone
		}
		return int(ne.Uint32(body[diagMsgUIDOff:])), nil
	}
	return -1, fmt.Errorf("sock_diag: unexpected message type %d", ne.Uint16(b[4:]))
}

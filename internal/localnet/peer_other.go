//go:build !linux && !darwin

package localnet

import "net"

// peerUID is not available here: the socket's owner check in dialUnix, the 0700 data dir
// and the token proof on TCP are what protect the connection (see the README).
func peerUID(net.Conn) (int, error) { return -1, errNoPeerUID }

package localnet

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"
)

func TestPeerUIDOfOwnTCPListener(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skip("no /proc/net/tcp on this OS")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	uid, err := peerUID(c)
	if err != nil || uid != os.Getuid() {
		t.Fatalf("peer uid %d, %v; want %d", uid, err, os.Getuid())
	}
}

func TestParseProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:9790":                         "127.0.0.1:38800",
		"00000000000000000000000001000000:1F90": "[::1]:8080",
		"0000000000000000FFFF00000100007F:0050": "[::ffff:127.0.0.1]:80",
	} {
		got, err := parseProcAddr(in)
		if err != nil || got != netip.MustParseAddrPort(want) {
			t.Errorf("%s: got %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "0100007F", "0100007F:zz", "01007F:0050", "0100007G:0050"} {
		if _, err := parseProcAddr(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// loopbackPair returns both ends of a loopback TCP connection.
func loopbackPair(tb testing.TB, network, addr string) (client, server net.Conn) {
	tb.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		tb.Skipf("%s %s: %v", network, addr, err)
	}
	defer ln.Close()
	client, err = net.Dial(network, ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestDiagOwnerFindsPeer: sock_diag answers the peer's owner for IPv4 and IPv6 (it is the
// path taken; /proc/net/tcp is the fallback), a socket that does not exist is not found,
// and a peer that closed (timewait, no owner) is not taken for root.
func TestDiagOwnerFindsPeer(t *testing.T) {
	for _, c := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		t.Run(c.network, func(t *testing.T) {
			client, server := loopbackPair(t, c.network, c.addr)
			local := server.LocalAddr().(*net.TCPAddr).AddrPort()
			remote := server.RemoteAddr().(*net.TCPAddr).AddrPort()
			uid, err := diagOwner(remote, local)
			if errors.Is(err, errNoDiag) {
				t.Skipf("kernel without inet_diag: %v", err)
			}
			if err != nil || uid != os.Getuid() {
				t.Fatalf("diagOwner: %d, %v; want %d", uid, err, os.Getuid())
			}
			if uid, err := procTCPOwner(remote, local); err != nil || uid != os.Getuid() {
				t.Fatalf("procTCPOwner: %d, %v", uid, err)
			}
			if _, err := diagOwner(netip.AddrPortFrom(remote.Addr(), 1), local); err == nil {
				t.Fatal("a socket that does not exist was found")
			}
			client.Close()
			server.(*net.TCPConn).CloseWrite()
			// The client's socket goes FIN_WAIT2, then timewait once we close too.
			server.Close()
			if uid, err := diagOwner(remote, local); err == nil {
				t.Fatalf("closed peer answered uid %d", uid)
			}
		})
	}
}

// BenchmarkPeerUIDTCP is the cost the TCP listener adds to each accepted connection.
func BenchmarkPeerUIDTCP(b *testing.B) {
	_, server := loopbackPair(b, "tcp4", "127.0.0.1:0")
	local := server.LocalAddr().(*net.TCPAddr).AddrPort()
	remote := server.RemoteAddr().(*net.TCPAddr).AddrPort()
	b.Run("sock_diag", func(b *testing.B) {
		for b.Loop() {
			if _, err := diagOwner(remote, local); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("proc_net_tcp", func(b *testing.B) {
		for b.Loop() {
			if _, err := procTCPOwner(remote, local); err != nil {
				b.Fatal(err)
			}
		}
	})
}

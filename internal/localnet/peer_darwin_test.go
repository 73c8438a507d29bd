package localnet

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestPeerUIDOfOwnUnixSocket runs on the release workflow's macOS runners: both ends of a
// Unix socket of this process report this process's uid through LOCAL_PEERCRED.
func TestPeerUIDOfOwnUnixSocket(t *testing.T) {
	// macOS limits a socket path to 104 bytes: t.TempDir() under /var/folders can exceed it.
	dir, err := os.MkdirTemp("/tmp", "mn")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	defer s.Close()
	for name, conn := range map[string]net.Conn{"client": c, "server": s} {
		uid, err := peerUID(conn)
		if err != nil || uid != os.Getuid() {
			t.Errorf("%s side: peer uid %d, %v; want %d", name, uid, err, os.Getuid())
		}
	}
	tc, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	d, err := net.Dial("tcp", tc.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := peerUID(d); err == nil {
		t.Error("a TCP connection has no peer uid on macOS: want an error")
	}
}

package localnet

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/memnode/memnode/internal/datadir"
)

// connectEnv makes the test binary a client of another user (see TestMain).
const connectEnv = "LOCALNET_TEST_CONNECT"

func TestMain(m *testing.M) {
	if path := os.Getenv(connectEnv); path != "" {
		network := "unix"
		if addr, ok := strings.CutPrefix(path, "tcp:"); ok {
			network, path = "tcp", addr
		}
		c, err := net.Dial(network, path)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(0)
		}
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			fmt.Println("read:", err)
			os.Exit(0)
		}
		fmt.Println("answer:", resp.Status)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func nobody(t *testing.T) (uid, gid int) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("acting as another user needs root (tests run as root in CI)")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// TestSocketRefusesOtherUID: even with the socket made world-writable (and the data dir
// open), the node's listener drops another user's connection (SO_PEERCRED) before any
// request is read; and a client refuses a socket that another user owns.
func TestSocketRefusesOtherUID(t *testing.T) {
	uid, gid := nobody(t)
	dir, err := os.MkdirTemp("", "localnet-uid")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	sock := SocketPath(dir)
	ln, err := ListenUnix(sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	ts := httptest.NewUnstartedServer(node(rec, testToken))
	ts.Listener = ln
	ts.Start()
	defer ts.Close()
	os.Chmod(sock, 0o666)

	self, _ := os.Executable()
	bin := filepath.Join(dir, "client")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{connectEnv + "=" + sock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client as nobody: %v", err)
	}
	if !strings.HasPrefix(string(out), "read:") || len(rec.all()) != 0 {
		t.Fatalf("another user's connection was served: %q, node saw %q", out, rec.all())
	}

	// The client side: a socket owned by another uid is not dialled.
	os.WriteFile(datadir.Dir(dir).Token(), []byte(testToken), 0o600)
	if err := os.Lchown(sock, uid, gid); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDialer(dir, 1, false).DialContext(t.Context()); !errors.Is(err, ErrNotOurNode) {
		t.Fatalf("dial a socket of another uid: %v", err)
	}
}

// asNobody copies the test binary where nobody can run it and returns a command that runs
// it as nobody with env.
func asNobody(t *testing.T, env string) *exec.Cmd {
	t.Helper()
	uid, gid := nobody(t)
	dir, err := os.MkdirTemp("", "localnet-uid")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	self, _ := os.Executable()
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "client")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{env}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	return cmd
}

// TestTCPListenerRefusesOtherUID: a process of another user connecting to the TCP
// listener is closed on before any byte is read (the handler never runs); the user's own
// connection is served.
func TestTCPListenerRefusesOtherUID(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := ListenTCP(addr, nil)
		if err != nil {
			t.Logf("%s: %v (skipped)", addr, err)
			continue
		}
		rec := &recorder{}
		ts := httptest.NewUnstartedServer(node(rec, testToken))
		ts.Listener = ln
		ts.Start()
		out, err := asNobody(t, connectEnv+"=tcp:"+ln.Addr().String()).Output()
		if err != nil {
			t.Fatalf("client as nobody: %v", err)
		}
		if !strings.HasPrefix(string(out), "read:") || len(rec.all()) != 0 {
			t.Fatalf("%s: another user's connection was served: %q, node saw %q", addr, out, rec.all())
		}
		res, err := http.Get("http://" + ln.Addr().String() + "/health")
		if err != nil {
			t.Fatalf("%s: own connection refused: %v", addr, err)
		}
		res.Body.Close()
		if len(rec.all()) != 1 {
			t.Fatalf("%s: own request not served: %q", addr, rec.all())
		}
		ts.Close()
	}
}

package localnet

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/memnode/memnode/internal/datadir"
)

const testToken = "0123456789abcdef0123456789abcdef"

// recorder is an HTTP server that remembers every request it got, with its headers.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) add(req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, req.Method+" "+req.URL.Path+" auth="+req.Header.Get("Authorization")+" body="+string(b))
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

// node answers challenges with token (the real node's /health does the same).
func node(rec *recorder, token string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec.add(req)
		if ch := req.Header.Get(ChallengeHeader); ch != "" && token != "" {
			w.Header().Set(ProofHeader, Proof(token, ch))
		}
		io.WriteString(w, `{"status":"ok"}`)
	})
}

func dataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(datadir.Dir(dir).Token(), []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func tcpDialer(t *testing.T, dir string, ts *httptest.Server) Dialer {
	t.Helper()
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return NewDialer(dir, p, true)
}

func post(d Dialer) error {
	hc := &http.Client{Transport: d.Transport()}
	defer hc.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodPost, d.BaseURL()+"/api/events", strings.NewReader(`{"secret":"prompt"}`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

func TestTCPNodeProvesAndGetsTheRequest(t *testing.T) {
	dir := dataDir(t)
	rec := &recorder{}
	ts := httptest.NewServer(node(rec, testToken))
	defer ts.Close()
	if err := post(tcpDialer(t, dir, ts)); err != nil {
		t.Fatal(err)
	}
	got := rec.all()
	if len(got) != 2 || !strings.HasPrefix(got[0], "GET /health auth= ") || got[1] != "POST /api/events auth=Bearer "+testToken+` body={"secret":"prompt"}` {
		t.Fatalf("node saw %q", got)
	}
}

// A listener of the same uid that does not hold the token (a stale or hostile program on
// the port) gets the challenge and nothing else: no token, no body.
func TestTCPImpostorGetsNothing(t *testing.T) {
	dir := dataDir(t)
	for name, token := range map[string]string{"no proof": "", "wrong token": "another-token"} {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			ts := httptest.NewServer(node(rec, token))
			defer ts.Close()
			if err := post(tcpDialer(t, dir, ts)); !errors.Is(err, ErrNotOurNode) {
				t.Fatalf("want ErrNotOurNode, got %v", err)
			}
			for _, s := range rec.all() {
				if !strings.HasPrefix(s, "GET /health auth= body=") || strings.Contains(s, testToken) {
					t.Fatalf("impostor saw %q", s)
				}
			}
		})
	}
}

// A listener that answers with more than one response (or garbage) is not trusted either.
func TestTCPGarbageAfterProof(t *testing.T) {
	dir := dataDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4096)
		n, _ := c.Read(buf)
		ch := ""
		for _, line := range strings.Split(string(buf[:n]), "\r\n") {
			if v, ok := strings.CutPrefix(line, ChallengeHeader+": "); ok {
				ch = v
			}
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n"+ProofHeader+": "+Proof(testToken, ch)+"\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n")
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	c, err := NewDialer(dir, p, true).DialContext(context.Background())
	if !errors.Is(err, ErrNotOurNode) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("want ErrNotOurNode, got %v", err)
	}
}

func TestUnixSocket(t *testing.T) {
	dir := dataDir(t)
	ln, err := ListenUnix(SocketPath(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	ts := httptest.NewUnstartedServer(node(rec, testToken))
	ts.Listener = ln
	ts.Start()
	defer ts.Close()
	fi, err := os.Stat(SocketPath(dir))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi.Mode(), err)
	}
	if err := post(NewDialer(dir, 1, false)); err != nil {
		t.Fatal(err)
	}
	if got := rec.all(); len(got) != 1 || !strings.HasPrefix(got[0], "POST /api/events auth=Bearer ") {
		t.Fatalf("node saw %q", got)
	}
	// A second listener (the next node) replaces a stale socket file.
	ts.Close()
	ln2, err := ListenUnix(SocketPath(dir), nil)
	if err != nil {
		t.Fatalf("relisten: %v", err)
	}
	ln2.Close()
}

func TestNothingListens(t *testing.T) {
	dir := dataDir(t)
	_, err := NewDialer(dir, 1, false).DialContext(context.Background())
	if !Refused(err) {
		t.Fatalf("missing socket: want a refused error, got %v", err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	p, _ := strconv.Atoi(port)
	if _, err := NewDialer(dir, p, true).DialContext(context.Background()); !Refused(err) {
		t.Fatalf("closed port: want a refused error, got %v", err)
	}
	long := NewDialer("/"+strings.Repeat("d", 120), 1, false)
	if _, err := long.DialContext(context.Background()); !errors.Is(err, ErrSocketPath) {
		t.Fatalf("long path: %v", err)
	}
}

func TestProof(t *testing.T) {
	ch := NewChallenge()
	if !ValidChallenge(ch) || ValidChallenge("abc") || ValidChallenge(strings.Repeat("zz", 32)) {
		t.Fatal("ValidChallenge")
	}
	dir := dataDir(t)
	if !CheckProof(dir, ch, Proof(testToken, ch)) || CheckProof(dir, ch, Proof("other", ch)) || CheckProof(dir, NewChallenge(), Proof(testToken, ch)) {
		t.Fatal("CheckProof")
	}
	if CheckProof(t.TempDir(), ch, Proof("", ch)) {
		t.Fatal("CheckProof without a token file must fail")
	}
}

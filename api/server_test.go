package api

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/localnet"
)

// TestHostAndOriginChecked: every route, /health included, refuses a non-loopback Host (DNS
// rebinding) and a foreign Origin; the node's own origin and no origin pass.
func TestHostAndOriginChecked(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:38800", Token: "tok", Backend: readyBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:38800", "", 200},
		{"localhost:38800", "", 200},
		{"[::1]:38800", "", 200},
		{"127.0.0.1:38800", "http://127.0.0.1:38800", 200},
		{"localhost:38800", "http://localhost:38800", 200},
		{"evil.example:38800", "", 403},
		{"evil.example", "", 403},
		{"127.0.0.1.evil.example:38800", "", 403},
		{"127.0.0.1:38800.evil.example", "", 403},
		{"localhost:38800.evil.example", "", 403},
		{"[::1]:38800.evil.example", "", 403},
		{"127.0.0.1:", "", 403},
		{"127.0.0.1:99999", "", 403},
		{"[::1", "", 403},
		{"127.0.0.1", "", 200},
		{"", "", 403},
		{"127.0.0.1:38800", "http://evil.example", 403},
		{"127.0.0.1:38800", "null", 403},
		{"127.0.0.1:38800", "http://127.0.0.1:9999", 403},
		{"127.0.0.1:38800", "https://127.0.0.1:38800", 403},
	} {
		for _, route := range []string{"/health", "/api/status"} {
			req := httptest.NewRequest(http.MethodGet, route, nil)
			req.Host = c.host
			req.Header.Set("Authorization", "Bearer tok")
			if c.origin != "" {
				req.Header.Set("Origin", c.origin)
			}
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, req)
			if w.Code != c.want {
				t.Errorf("%s Host %q Origin %q: %d, want %d", route, c.host, c.origin, w.Code, c.want)
			}
		}
	}
}

// TestHealthProvesAndNamesNoDataDir: /health answers a challenge with the token's proof and
// tells nothing about the user.
func TestHealthProvesAndNamesNoDataDir(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:38800", Token: "tok", Backend: readyBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	ch := localnet.NewChallenge()
	req := httptest.NewRequest(http.MethodGet, "/health", nil)
	req.Host = "127.0.0.1:38800"
	req.Header.Set(localnet.ChallengeHeader, ch)
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != 200 || w.Header().Get(localnet.ProofHeader) != localnet.Proof("tok", ch) {
		t.Fatalf("health: %d, proof %q", w.Code, w.Header().Get(localnet.ProofHeader))
	}
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["data_dir"]; ok || strings.Contains(w.Body.String(), "/") {
		t.Fatalf("health reveals a path: %s", w.Body.String())
	}
	req.Header.Set(localnet.ChallengeHeader, "not-hex")
	w = httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != http.StatusBadRequest || w.Header().Get(localnet.ProofHeader) != "" {
		t.Fatalf("bad challenge: %d", w.Code)
	}
}

// TestSocketServedWhenPortTaken: with a socket, a taken port does not stop the server; it
// serves the socket and says why TCP is off.
func TestSocketServedWhenPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sock := filepath.Join(t.TempDir(), "memnode.sock")
	s, err := New(Config{Addr: ln.Addr().String(), Socket: sock, Token: "tok", Backend: readyBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	if s.TCPError() == nil {
		t.Fatal("TCPError is nil with the port taken")
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://" + ln.Addr().String() + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("health over the socket: %s", resp.Status)
	}
	// Without a socket a taken port is an error, as before.
	s2, _ := New(Config{Addr: ln.Addr().String(), Token: "tok", Backend: readyBackend{}})
	if err := s2.Start(); err == nil {
		s2.Close(context.Background())
		t.Fatal("Start succeeded on a taken port without a socket")
	}
}

// TestLoopbackOnly: the pprof server's guard refuses rebinding hosts and any Origin.
func TestLoopbackOnly(t *testing.T) {
	h := LoopbackOnly(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, c := range []struct {
		host, origin string
		want         int
	}{
		{"127.0.0.1:6060", "", 200},
		{"localhost:6060", "", 200},
		{"evil.example:6060", "", 403},
		{"127.0.0.1:6060", "http://127.0.0.1:6060", 403},
	} {
		req := httptest.NewRequest(http.MethodGet, "/debug/pprof/", nil)
		req.Host = c.host
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != c.want {
			t.Errorf("Host %q Origin %q: %d, want %d", c.host, c.origin, w.Code, c.want)
		}
	}
}

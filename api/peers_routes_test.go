package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/replica"
	memsync "github.com/memnode/memnode/sync"
)

// lockedBuf is a log sink shared by several loggers.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// readyBackend is the smallest core backend: always ready, nothing else used here.
type readyBackend struct{}

func (readyBackend) Ready() bool { return true }
func (readyBackend) Ingest(context.Context, apitype.Event) (apitype.EventReply, error) {
	return apitype.EventReply{}, nil
}
func (readyBackend) Context(context.Context, string, string) (apitype.Context, error) {
	return apitype.Context{}, nil
}
func (readyBackend) ObservationsByFile(context.Context, string, []string, int) ([]apitype.FileObservation, error) {
	return nil, nil
}
func (readyBackend) Status(context.Context) (apitype.Status, error) { return apitype.Status{}, nil }

var _ Backend = readyBackend{}

// peerServer runs a real sync node (real replica file, libp2p and memberlist on 127.0.0.1)
// behind the real routes.
func peerServer(t *testing.T, name string, logs *lockedBuf) (*httptest.Server, *memsync.Node) {
	t.Helper()
	dir := t.TempDir()
	_, id, err := memsync.LoadOrCreateIdentity(filepath.Join(dir, "identity.key"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replica.Open(context.Background(), replica.Config{Path: filepath.Join(dir, "memnode.db"), Origin: id.String()})
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	n, err := memsync.New(memsync.Config{DataDir: dir, DeviceName: name, Store: rep, Logger: logger, JoinRetry: 200 * time.Millisecond, Debounce: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Token: "tok", Backend: readyBackend{}, Peers: n, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		n.Close()
		rep.Close()
	})
	return ts, n
}

func call(t *testing.T, ts *httptest.Server, method, path, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

func TestPeersRoutesInviteJoinStatusRemove(t *testing.T) {
	var logs lockedBuf
	a, _ := peerServer(t, "laptop", &logs)
	b, nb := peerServer(t, "desktop", &logs)

	var inv InviteReply
	if st := call(t, a, "POST", "/api/peers/invite", `{"ttl":"5m"}`, &inv); st != 200 || !strings.HasPrefix(inv.Code, "MN1") {
		t.Fatalf("invite: %d %+v", st, inv)
	}
	if st := call(t, a, "POST", "/api/peers/invite", `{"ttl":"forever"}`, nil); st != 400 {
		t.Fatalf("bad ttl: %d", st)
	}
	var e struct{ Error string }
	if st := call(t, b, "POST", "/api/peers/join", `{"code":"MN1NOTACODE"}`, &e); st != 400 || !strings.Contains(e.Error, "malformed") {
		t.Fatalf("malformed code: %d %q", st, e.Error)
	}
	if st := call(t, b, "POST", "/api/peers/join", `{"code":"`+inv.Code+`"}`, nil); st != 200 {
		t.Fatalf("join: %d", st)
	}
	if st := call(t, b, "POST", "/api/peers/join", `{"code":"`+inv.Code+`"}`, &e); st != 409 {
		t.Fatalf("second join of a device already in a group: %d %q", st, e.Error)
	}
	var st memsync.Status
	testkit.WaitFor(t, "status to show desktop alive", 10*time.Second, func() bool {
		st = memsync.Status{}
		if code := call(t, a, "GET", "/api/peers", "", &st); code != 200 {
			t.Fatalf("status: %d", code)
		}
		return len(st.Devices) == 2 && st.Devices[1].State == memsync.StateAlive
	})
	if st.Devices[0].Name != "laptop" || !st.Devices[0].Self || st.Devices[1].Name != "desktop" || st.Devices[1].PeerID != nb.ID().String() {
		t.Fatalf("status: %+v", st)
	}
	if code := call(t, a, "POST", "/api/peers/remove", `{"device":"nosuch"}`, nil); code != 404 {
		t.Fatalf("remove unknown: %d", code)
	}
	if code := call(t, a, "POST", "/api/peers/remove", `{"device":"laptop"}`, nil); code != 400 {
		t.Fatalf("remove self: %d", code)
	}
	var m memsync.Member
	if code := call(t, a, "POST", "/api/peers/remove", `{"device":"desktop"}`, &m); code != 200 || m.PeerID != nb.ID().String() {
		t.Fatalf("remove: %d %+v", code, m)
	}
	if code := call(t, a, "GET", "/api/peers", "", &st); code != 200 || len(st.Devices) != 1 || len(st.Removed) != 1 || st.KeyEpoch != 2 {
		t.Fatalf("after remove: %+v", st)
	}
	if strings.Contains(logs.String(), inv.Code) {
		t.Fatal("the invite code reached a log")
	}
}

func TestPeersRoutesOffWithoutSync(t *testing.T) {
	s, err := New(Config{Token: "tok", Backend: readyBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if code := call(t, ts, "GET", "/api/peers", "", nil); code != http.StatusServiceUnavailable {
		t.Fatalf("peers without sync: %d", code)
	}
	req, _ := http.NewRequest("GET", ts.URL+"/api/peers", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("peers without token: %d", resp.StatusCode)
	}
}

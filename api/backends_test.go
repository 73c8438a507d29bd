package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/search"
)

// TestSetBackendsHandsOverThePartsAtOnce: a server made before the node's parts run answers
// their routes 503 with what is missing, then why a part did not start, then serves the
// parts SetBackends hands it — the one hand-over that replaced node's forwarders.
func TestSetBackendsHandsOverThePartsAtOnce(t *testing.T) {
	testkit.LeakCheck(t)
	s, err := New(Config{Token: "tok", Backend: readyBackend{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	expect := func(path string, code int, msg string) {
		t.Helper()
		var body struct {
			Error string `json:"error"`
		}
		if got := call(t, ts, http.MethodGet, path, "", &body); got != code || body.Error != msg {
			t.Fatalf("GET %s: %d %q, want %d %q", path, got, body.Error, code, msg)
		}
	}
	expect("/api/peers", http.StatusServiceUnavailable, "device sync is off on this node")
	expect("/api/team", http.StatusServiceUnavailable, "team memory is not available on this node")
	expect("/api/search?q=invoice", http.StatusServiceUnavailable, "search is not served by this node")

	s.SetBackends(Backends{PeersErr: errors.New("listen tcp 127.0.0.1:4001: address already in use"), TeamErr: errors.New("open team state: disk I/O error")})
	expect("/api/peers", http.StatusServiceUnavailable, "device sync failed to start: listen tcp 127.0.0.1:4001: address already in use")
	expect("/api/team", http.StatusServiceUnavailable, "team memory failed to start: open team state: disk I/O error")

	rep := testkit.OpenReplica(t, "dev-a")
	s.SetBackends(Backends{Search: search.NewService(rep, search.Config{})})
	var res apitype.Results
	if code := call(t, ts, http.MethodGet, "/api/search?q=invoice", "", &res); code != http.StatusOK {
		t.Fatalf("search after SetBackends: %d", code)
	}
	expect("/api/peers", http.StatusServiceUnavailable, "device sync is off on this node")
}

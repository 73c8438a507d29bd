package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/memnode/memnode/api/apitype"
	"github.com/memnode/memnode/client"
	"github.com/memnode/memnode/internal/localnet"
)

func TestFromDialer(t *testing.T) {
	dir := t.TempDir()
	d := localnet.NewDialer(dir, 1, false)
	if _, err := client.FromDialer(d); !errors.Is(err, client.ErrNoToken) {
		t.Fatalf("no token: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var got string
	ln, err := localnet.ListenUnix(localnet.SocketPath(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		io.WriteString(w, `{"hits":[]}`)
	}))
	ts.Listener = ln
	ts.Start()
	defer ts.Close()
	c, err := client.FromDialer(d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Search(context.Background(), apitype.SearchQuery{Text: "x"}); err != nil || got != "Bearer s3cret" {
		t.Fatalf("search over the socket: %v, auth header %q", err, got)
	}
}

func TestNodeDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := client.New("http://"+addr, "t")
	if _, err := c.Get(context.Background(), []string{"a"}); !errors.Is(err, client.ErrNodeDown) {
		t.Fatalf("want ErrNodeDown, got %v", err)
	}
}

func TestExportDetectsTruncation(t *testing.T) {
	body := `{"kind":"header","header":{"format":"memnode-export","version":1,"exported_at":1}}` + "\n" +
		`{"kind":"tombstone","id":"a"}` + "\n"
	for _, c := range []struct {
		name, trailer string
		wantErr       bool
	}{
		{"complete", `{"kind":"end","count":2}` + "\n", false},
		{"cut short", "", true},
		{"count mismatch", `{"kind":"end","count":3}` + "\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, body+c.trailer)
			}))
			defer ts.Close()
			var out bytes.Buffer
			n, err := client.New(ts.URL, "t").Export(context.Background(), "", &out)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v", err)
			}
			if !c.wantErr && (n != 2 || out.String() != body) {
				t.Fatalf("copied %d records: %q", n, out.String())
			}
		})
	}
}

// A client made before the node first ran (the hook's case) reads the token at every
// request, so it works as soon as the node has written one.
func TestTokenReadPerRequest(t *testing.T) {
	dir := t.TempDir()
	var auth, ua string
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, ua = r.Header.Get("Authorization"), r.Header.Get("User-Agent")
		fmt.Fprintf(w, `{"status":"ok","ready":true,"api":%d}`, apitype.Version)
	}))
	defer ts.Close()
	c := client.NewWithConfig(client.Config{BaseURL: ts.URL, DataDir: dir, UserAgent: "memnode-test/1"})
	if _, err := c.Raw(context.Background(), http.MethodGet, "/api/status", nil, 1<<10); !errors.Is(err, client.ErrNoToken) {
		t.Fatalf("before the token exists: %v, want ErrNoToken", err)
	}
	// /health needs no token.
	if h, err := c.Health(context.Background()); err != nil || !h.Ready || h.API != apitype.Version || auth != "" {
		t.Fatalf("health: %+v %v, auth %q", h, err, auth)
	}
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("fresh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Raw(context.Background(), http.MethodGet, "/api/status", nil, 1<<10); err != nil || auth != "Bearer fresh" || ua != "memnode-test/1" {
		t.Fatalf("after: %v, auth %q, user agent %q", err, auth, ua)
	}
}

func TestStatusErrors(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		w.WriteHeader(code)
		io.WriteString(w, `{"error":"because"}`)
	}))
	defer ts.Close()
	c := client.New(ts.URL, "t")
	for code, want := range map[int]error{400: client.ErrRejected, 401: client.ErrRejected, 404: client.ErrNotFound,
		413: client.ErrRejected, 503: client.ErrNodeDown, 500: nil} {
		_, err := c.Raw(context.Background(), http.MethodGet, "/x?code="+strconv.Itoa(code), nil, 1<<10)
		var se *client.StatusError
		if !errors.As(err, &se) || se.Code != code || se.Message != "because" {
			t.Errorf("%d: %v, want a StatusError with the node's message", code, err)
			continue
		}
		if want != nil && !errors.Is(err, want) {
			t.Errorf("%d: %v, want %v", code, err, want)
		}
		if want == nil && (errors.Is(err, client.ErrRejected) || errors.Is(err, client.ErrNodeDown) || errors.Is(err, client.ErrNotFound)) {
			t.Errorf("%d: %v matches a sentinel", code, err)
		}
	}
}

// ProvenHealth trusts only a listener that answers the challenge with the data dir's
// token: one without the token (a squatter) is ErrNotOurNode, whatever it says.
func TestProvenHealth(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("the-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		token   string // what the listener proves with; "" proves nothing
		code    int
		wantErr error
	}{
		{"our node", "the-token", http.StatusOK, nil},
		{"a squatter without the token", "", http.StatusOK, localnet.ErrNotOurNode},
		{"a squatter with another token", "guess", http.StatusOK, localnet.ErrNotOurNode},
		{"a squatter answering 404", "", http.StatusNotFound, localnet.ErrNotOurNode},
		{"our node, shutting down", "the-token", http.StatusServiceUnavailable, client.ErrNodeDown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.token != "" {
					w.Header().Set(localnet.ProofHeader, localnet.Proof(tc.token, r.Header.Get(localnet.ChallengeHeader)))
				}
				w.WriteHeader(tc.code)
				fmt.Fprintf(w, `{"status":"ok","ready":true,"pid":42,"api":%d}`, apitype.Version)
			}))
			defer ts.Close()
			c := client.NewWithConfig(client.Config{BaseURL: ts.URL, DataDir: dir})
			h, err := c.ProvenHealth(context.Background())
			if tc.wantErr == nil {
				if err != nil || !h.Ready || h.PID != 42 {
					t.Fatalf("health %+v, %v", h, err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

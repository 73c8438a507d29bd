package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/memnode/memnode/api"
	"github.com/memnode/memnode/internal/testkit"
)

// TestServerCloseLeavesNothingRunning serves real requests on a loopback listener, keeps a
// connection open across Close, and checks Close leaves no goroutine behind and is
// idempotent.
func TestServerCloseLeavesNothingRunning(t *testing.T) {
	testkit.LeakCheck(t)
	srv, err := api.New(api.Config{Addr: "127.0.0.1:0", Token: "tok", Backend: coreStub{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for _, path := range []string{"/health", "/api/status"} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+srv.Addr()+path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d", path, resp.StatusCode)
		}
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(context.Background()); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.Get("http://" + srv.Addr() + "/health"); err == nil {
		t.Fatal("the server still answers after Close")
	}
}

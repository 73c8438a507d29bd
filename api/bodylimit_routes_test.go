package api

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// zeros is an endless body of '0' bytes: a 65 MiB request without holding 65 MiB.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// TestEveryWriteRouteRefusesAHugeBody walks the routes the server registered — so a route
// added later is covered without editing this test — and sends each POST, PUT and DELETE
// route a 65 MiB body: declared, every one is refused with 413 before a byte is read (the
// largest route limit is 64 MiB); chunked, none fails.
func TestEveryWriteRouteRefusesAHugeBody(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a body over the limit to every write route; TestEveryRouteBoundsItsBody runs, make test runs this too")
	}
	v := startViewer(t)
	var routes []gin.RouteInfo
	for _, r := range v.srv.engine.Routes() {
		if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodDelete {
			routes = append(routes, r)
		}
	}
	// The viewer's server has every route but those of search (records, forget, notes,
	// import): TestEveryRouteBoundsItsBody and the e2e TestHugeBodiesAreRefused send those.
	if len(routes) < 10 {
		t.Fatalf("only %d write routes: %v", len(routes), routes)
	}
	refused := 0
	for _, r := range routes {
		path := strings.ReplaceAll(r.Path, ":", "x")
		for _, declared := range []bool{true, false} {
			var body io.Reader = io.LimitReader(zeros{}, 65<<20)
			req, err := http.NewRequest(r.Method, v.base+path, body)
			if err != nil {
				t.Fatal(err)
			}
			if declared {
				req.ContentLength = 65 << 20
			} else {
				req.ContentLength = -1 // chunked: the limit must hold while reading
			}
			req.Header.Set("Authorization", "Bearer "+viewerToken)
			req.Header.Set("Content-Type", "application/json")
			res, err := v.hc.Do(req)
			if err != nil {
				// The server may close the connection while the client still writes; what
				// matters is that nothing was served.
				continue
			}
			msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			res.Body.Close()
			if declared && res.StatusCode == http.StatusRequestEntityTooLarge {
				refused++
			}
			switch {
			case declared && res.StatusCode != http.StatusRequestEntityTooLarge:
				// Refused before a byte is read: the middleware sees the length.
				t.Errorf("%s %s (declared): %d %s, want 413", r.Method, r.Path, res.StatusCode, msg)
			case !declared && res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable:
				// Chunked: a route that reads its body stops at its limit (413); one that
				// takes no body answers without reading it. Neither may fail.
				t.Errorf("%s %s (chunked): %d %s", r.Method, r.Path, res.StatusCode, msg)
			}
		}
	}
	if refused != len(routes) {
		t.Errorf("%d of %d write routes answered 413 to a declared 65 MiB body", refused, len(routes))
	}
	t.Logf("%d write routes refused a declared 65 MiB body", refused)
}

package cli

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// vmHWM is the peak resident set size of process pid, in bytes (Linux).
func vmHWM(tb testing.TB, pid int) int64 {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Skipf("no /proc/PID/status on this system: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmHWM line in /proc/PID/status")
	return 0
}

// TestHugeBodiesAreRefused: a 65 MiB body to every POST route of a real node, declared
// (Content-Length) and streamed (chunked), is refused with a 4xx, and the node's peak RSS
// stays under 200 MiB.
func TestHugeBodiesAreRefused(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sends 1.3 GiB over loopback")
	}
	in := e2ekit.NewInstance(t)
	in.Start()
	pid := in.Pid()
	// Valid JSON as far as it goes: a decoder must read it to the limit to reject it.
	body := []byte(`{"ids":["` + strings.Repeat("A", 65<<20) + `"]}`)
	routes := []string{"/api/events", "/api/events/batch", "/api/records/batch", "/api/forget", "/api/memories",
		"/api/import", "/api/context/semantic", "/api/peers/invite", "/api/peers/join", "/api/peers/remove"}
	for _, route := range routes {
		for _, declared := range []bool{true, false} {
			var rd io.Reader = bytes.NewReader(body)
			if !declared {
				rd = io.MultiReader(rd) // no length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", in.Port, route), rd)
			req.Header.Set("Authorization", "Bearer "+in.Token())
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				// The node may close the connection while the client still writes: that is
				// a refusal too, as long as the node is alive (checked below).
				t.Logf("%s (declared=%v): %v", route, declared, err)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			t.Logf("%s (declared=%v): %d, peak RSS %d MiB", route, declared, resp.StatusCode, vmHWM(t, pid)>>20)
			if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Errorf("%s (declared=%v): status %d, want 4xx", route, declared, resp.StatusCode)
			}
		}
	}
	if r := in.Run(nil, "status"); r.Code != 0 {
		t.Fatalf("node not healthy after the bodies: %s %s", r.Stdout, r.Stderr)
	}
	hwm := vmHWM(t, pid)
	t.Logf("node peak RSS (VmHWM) after 65 MiB bodies to %d routes: %d MiB", len(routes), hwm>>20)
	if hwm >= 200<<20 {
		t.Fatalf("node peak RSS %d MiB, want < 200 MiB", hwm>>20)
	}
}

package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/memnode/memnode/internal/e2ekit"
)

// TestMCPProcessSurvivesBadLinesAndAnswersBeforeEOF: the real `memnode mcp` against a real
// node reads a whole session from a stdin that then ends: malformed lines get JSON-RPC
// errors, the server keeps answering, and the calls written just before EOF are answered.
func TestMCPProcessSurvivesBadLinesAndAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	in := e2ekit.NewInstance(t)
	in.Start()
	lines := []string{
		`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":`,
		`{"jsonrpc":"1.0","id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":3}`,
		`42`,
		`{"jsonrpc":"2.0","id":"ping","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"search","arguments":{"query":"anything"}}}`,
		`{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"save_memory","arguments":{"text":"the e2e note","project":"mcp-e2e"}}}`,
	}
	r := in.Run([]byte(strings.Join(lines, "\n")+"\n"), "mcp")
	if r.Code != 0 {
		t.Fatalf("memnode mcp: exit %d, stderr %s", r.Code, r.Stderr)
	}
	got := map[string]json.RawMessage{} // id → whole reply
	errs := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int64 `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		got[string(m.ID)] = json.RawMessage(l)
		if m.Error != nil {
			errs[string(m.ID)] = m.Error.Code
		}
	}
	if n := len(strings.Split(strings.TrimSpace(r.Stdout), "\n")); n != 8 {
		t.Errorf("%d replies, want 8 (init, 4 errors, ping, 2 calls):\n%s", n, r.Stdout)
	}
	for id, code := range map[string]int64{"2": -32600, "3": -32600} {
		if errs[id] != code {
			t.Errorf("id %s: error code %d, want %d", id, errs[id], code)
		}
	}
	if errs["null"] == 0 {
		t.Errorf("no error reply with id null for the lines without a usable id:\n%s", r.Stdout)
	}
	for _, id := range []string{`"init"`, `"ping"`, `"s1"`, `"s2"`} {
		if _, ok := got[id]; !ok || errs[id] != 0 {
			t.Errorf("call %s not answered (or answered with an error):\n%s", id, r.Stdout)
		}
	}
	if !strings.Contains(string(got[`"s2"`]), "Saved as") {
		t.Errorf("save_memory just before EOF: %s", got[`"s2"`])
	}
}

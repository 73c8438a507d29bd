package hooks

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/claudecode"
	"github.com/memnode/memnode/platform/platformtest"
)

func fixtureCalls(tb testing.TB) []platformtest.Call {
	tb.Helper()
	return platformtest.Session(tb, filepath.Join("..", claudecode.Platform().Fixtures))
}

// FuzzDecodeInput feeds arbitrary stdin to the decode/normalise path: it never panics, the
// Run answer is always one JSON object, and nothing inside <private> survives normalisation.
func FuzzDecodeInput(f *testing.F) {
	for _, c := range fixtureCalls(f) {
		f.Add([]byte(c.Payload), "before ", " after")
	}
	f.Add([]byte(`{"prompt":["x"],"tool_input":{"<private>k</private>":1e400}}`), "<private", "</private>")
	f.Add([]byte(`{"tool_input":{"file_path":"\u003cprivate\u003eSECRET-marker\u003c/private\u003e"}}`), "", "")
	f.Add([]byte(``), "", "")
	f.Add([]byte(`{`), "<", ">")
	f.Fuzz(func(t *testing.T, raw []byte, a, c string) {
		for _, event := range []string{platform.EventSessionInit, platform.EventFileContext, platform.EventObservation} {
			// Raw bytes as they come.
			if _, cleaned, err := cleanInput(raw); err == nil {
				in, err := claudecode.Adapter{}.Normalize(event, cleaned)
				if err == nil {
					assertNoPrivateTag(t, in)
				}
			}
			// A private secret between fuzzed text, in every field memnode uses.
			secret := a + "<private>SECRET-marker</private>" + c
			payload, _ := json.Marshal(map[string]any{
				"session_id": secret, "cwd": secret, "prompt": secret, "tool_name": secret,
				"tool_input":    map[string]any{"file_path": secret, secret: []any{secret, 1.5}},
				"tool_response": secret, "last_assistant_message": secret, "agent_id": secret,
			})
			_, cleaned, err := cleanInput(payload)
			if err != nil {
				continue // a or c made invalid UTF-8 that json.Marshal replaced: still valid, so rare
			}
			in, err := claudecode.Adapter{}.Normalize(event, cleaned)
			if err != nil {
				t.Fatalf("normalize a valid payload: %v", err)
			}
			if !strings.Contains(a+c, "SECRET-marker") {
				b, _ := json.Marshal(in)
				if strings.Contains(string(b), "SECRET-marker") || strings.Contains(string(cleaned), "SECRET-marker") {
					t.Fatalf("private content survived: %s", b)
				}
			}
		}
	})
}

// assertNoPrivateTag checks that no string of the input still holds a <private> opening tag
// (an unclosed one hides everything after it, a closed one its content).
func assertNoPrivateTag(t *testing.T, in platform.Input) {
	t.Helper()
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if strings.Contains(strings.ToLower(x), "<private>") {
				t.Fatalf("a <private> tag survived: %q", x)
			}
		case map[string]any:
			for k, e := range x {
				walk(k)
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range [][]byte{b, in.ToolInput, in.ToolResponse} {
		if len(doc) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(doc))
		dec.UseNumber() // numbers keep their text, 1e400 included
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decode %s: %v", doc, err)
		}
		walk(v)
	}
}

// TestRunNeverBreaksOnGarbage runs the whole hook on odd inputs: one object, exit 0.
func TestRunNeverBreaksOnGarbage(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	for _, in := range []string{"\x00\xff", `{"prompt":"` + strings.Repeat("<private>", 1000) + `"}`, `{"tool_input":{"file_path":["x"]}}`, `{"cwd":"\u0000"}`} {
		for _, ev := range []string{"context", "session-init", "file-context", "observation", "summarize", "session-end"} {
			r := runHook(t, cfg, ev, in)
			if r.code != 0 {
				t.Fatalf("%s %q: code %d", ev, in, r.code)
			}
		}
	}
}

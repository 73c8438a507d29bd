package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTruncateJSONKeepsWhatFits(t *testing.T) {
	cases := []struct {
		name, prefix string
		want         string // "" means not ok
	}{
		{"inside a string value", `{"tool_name":"Bash","tool_response":{"stdout":"abcdef`, `{"tool_name":"Bash","tool_response":{"stdout":"abcdefM"}}`},
		{"inside an escape", `{"a":"x\`, `{"a":"xM"}`},
		{"inside a unicode escape", `{"a":"x\u00`, `{"a":"xM"}`},
		{"inside a key", `{"a":"x","bb`, `{"a":"x"}`},
		{"after a colon", `{"a":"x","b":`, `{"a":"x"}`},
		{"inside a number", `{"a":1,"b":12`, `{"a":1}`},
		{"inside a literal", `{"a":[true,fal`, `{"a":[true]}`},
		{"after a comma in an array", `{"a":[1,2,`, `{"a":[1,2]}`},
		{"an open container", `{"a":{`, `{"a":{}}`},
		{"split UTF-8", "{\"a\":\"h\xc3", `{"a":"hM"}`},
		{"not an object", `["a","b`, ""},
		{"nothing complete", `{"ab`, `{}`},
		{"empty", ``, ""},
	}
	for _, c := range cases {
		got, ok := truncateJSON([]byte(c.prefix), "M")
		if c.want == "" {
			if ok {
				t.Errorf("%s: got %s, want not ok", c.name, got)
			}
			continue
		}
		if !ok || string(got) != c.want {
			t.Errorf("%s: got %s (ok=%v), want %s", c.name, got, ok, c.want)
		}
	}
}

// TestOversizedHookInputIsKeptTruncated: a tool call whose payload is over MaxInputBytes
// reaches the node, its output cut short with the marker, instead of being dropped.
func TestOversizedHookInputIsKeptTruncated(t *testing.T) {
	n := newFakeNode(t)
	cfg := n.config(t)
	payload := `{"session_id":"` + sid + `","cwd":` + jsonQuote(newProject(t)) + `,"hook_event_name":"PostToolUse","tool_name":"Bash",` +
		`"tool_input":{"command":"cat big.log"},"tool_response":{"stdout":"` + strings.Repeat("line of log output\\n", (MaxInputBytes/20)+1000) + `"}}`
	r := runHook(t, cfg, "observation", payload)
	if r.code != 0 {
		t.Fatalf("code %d stderr %q", r.code, r.stderr)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.events) != 1 {
		log, _ := os.ReadFile(filepath.Join(cfg.DataDir, "logs", "hook.log"))
		t.Fatalf("node got %d events, want the truncated tool call; hook.log: %s", len(n.events), log)
	}
	ev := n.events[0]
	var resp struct {
		Stdout string `json:"stdout"`
	}
	if err := json.Unmarshal(ev.ToolResponse, &resp); err != nil {
		t.Fatalf("tool_response %.200s: %v", ev.ToolResponse, err)
	}
	if ev.ToolName != "Bash" || !strings.HasSuffix(resp.Stdout, TruncatedMarker) || len(resp.Stdout) > truncatedKeepBytes {
		t.Fatalf("tool %q, stdout of %d bytes ending %q: want Bash, cut with the marker", ev.ToolName, len(resp.Stdout), resp.Stdout[max(0, len(resp.Stdout)-80):])
	}
}

func jsonQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// FuzzTruncateJSON: whatever the prefix, the result is valid JSON when ok; and every prefix
// of a valid object that reaches its first value gives an object.
func FuzzTruncateJSON(f *testing.F) {
	for _, s := range []string{`{"a":"b"}`, `{"a":[1,2,{"c":"d\u00e9\n"}],"e":null}`, `{"x":{"y":{"z":"` + strings.Repeat("é", 10) + `"}}}`, `[1]`, `{`} {
		f.Add([]byte(s), uint16(len(s)))
	}
	f.Fuzz(func(t *testing.T, doc []byte, at uint16) {
		cut := int(at) % (len(doc) + 1)
		out, ok := truncateJSON(doc[:cut], TruncatedMarker)
		if ok && !json.Valid(out) {
			t.Fatalf("ok but invalid: %q -> %q", doc[:cut], out)
		}
		var obj map[string]any
		if json.Valid(doc) && json.Unmarshal(doc, &obj) == nil && cut > 0 && doc[0] == '{' && !ok {
			t.Fatalf("a prefix of a valid object gave nothing: %q", doc[:cut])
		}
	})
}

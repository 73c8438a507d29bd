package platform

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ObjectOf turns an agent's tool argument or result into the JSON object the canonical call
// carries: an object is kept; a JSON string that holds an object is decoded (Cursor and
// Windsurf send some as strings); anything else is wrapped as {key: value}. Empty or null
// gives nil.
func ObjectOf(raw json.RawMessage, key string) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	if raw[0] == '{' {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		b, _ := json.Marshal(map[string]json.RawMessage{key: raw})
		return b
	}
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	if strings.HasPrefix(t, "[") && json.Valid([]byte(t)) {
		b, _ := json.Marshal(map[string]json.RawMessage{key: json.RawMessage(t)})
		return b
	}
	b, _ := json.Marshal(map[string]string{key: s})
	return b
}

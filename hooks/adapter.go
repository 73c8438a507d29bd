package hooks

import (
	"bytes"
	"encoding/json"
)

// validObject reports whether b is exactly one JSON object.
func validObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 1 && b[0] == '{' && json.Valid(b)
}

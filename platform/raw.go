package platform

import (
	"bytes"
	"encoding/json"
)

// NonNull is raw, or nil when raw is absent or JSON null: the canonical Input's ToolInput and
// ToolResponse are nil when the agent sent nothing, whatever its payload spelled.
func NonNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return raw
}

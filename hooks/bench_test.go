package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/claudecode"
)

// BenchmarkHookObservation is one PostToolUse hook end to end, in process: decode and
// clean the payload, find the project, POST to a loopback node (a new connection each time,
// as a fresh hook process has), update the failure state, write the answer.
func BenchmarkHookObservation(b *testing.B) {
	n := newFakeNode(b)
	cfg := n.config(b)
	var payload []byte
	for _, c := range fixtureCalls(b) {
		var p struct {
			ToolName string `json:"tool_name"`
		}
		_ = json.Unmarshal(c.Payload, &p)
		if c.Event == platform.EventObservation && p.ToolName == "Edit" {
			payload = bytes.ReplaceAll(c.Payload, []byte("/home/dev/demo-app"), []byte(newProject(b)))
		}
	}
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for range b.N {
		if code := Run(context.Background(), cfg, claudecode.Platform(), platform.EventObservation, bytes.NewReader(payload), io.Discard, io.Discard); code != 0 {
			b.Fatalf("code %d", code)
		}
	}
	b.StopTimer()
	if len(n.Events()) != b.N {
		b.Fatalf("node got %d events, want %d", len(n.Events()), b.N)
	}
}

package e2ekit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func (in *Instance) Token() string {
	in.Tb.Helper()
	b, err := os.ReadFile(filepath.Join(in.DataDir, "token"))
	if err != nil {
		in.Tb.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (in *Instance) Pid() int {
	in.Tb.Helper()
	b, err := os.ReadFile(filepath.Join(in.DataDir, "memnode.pid"))
	if err != nil {
		in.Tb.Fatal(err)
	}
	var p struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		in.Tb.Fatal(err)
	}
	return p.PID
}

func ObservationEvent(id, session, project, command string) []byte {
	ev := map[string]any{
		"event_id": id, "kind": "observation", "platform": "claude-code", "session_id": session, "project": project,
		"tool_name": "Bash", "tool_input": map[string]any{"command": command, "description": "burst " + id},
		"tool_response": map[string]any{"stdout": "done " + id + "\n", "stderr": ""},
		"at":            time.Now().UTC().Format(time.RFC3339Nano),
	}
	b, _ := json.Marshal(ev)
	return b
}

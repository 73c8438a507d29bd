package e2ekit

import (
	"encoding/json"
)

// Origin is the node's device ID (its peer ID).
func (in *Instance) Origin() string {
	in.Tb.Helper()
	var st struct {
		Status struct {
			Origin string `json:"origin"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(in.MustRun(nil, "status", "--json")), &st); err != nil || st.Status.Origin == "" {
		in.Tb.Fatalf("status --json: origin missing (%v)", err)
	}
	return st.Status.Origin
}

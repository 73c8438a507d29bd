package e2ekit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// PostEvent posts one event to the node's /api/events, as a client other than the hook would.
func (in *Instance) PostEvent(ev map[string]any) {
	in.Tb.Helper()
	body, _ := json.Marshal(ev)
	req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/api/events", in.Port), bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+in.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		in.Tb.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		in.Tb.Fatalf("POST /api/events %v: %s", ev["kind"], resp.Status)
	}
}

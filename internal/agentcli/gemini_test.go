package agentcli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestGeminiStreamsFunctionCallThenAnswersJSON(t *testing.T) {
	s := NewServer(t, GeminiAPI{}, Sequence(
		Turn{Text: "Looking.", Calls: []Call{{Name: "read_file", Args: map[string]string{"file_path": "app.py"}}}},
		Turn{Text: "Fixed."},
	))
	tools := `"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"mcp_memnode_search"}]}]`
	ev := sseEvents(t, post(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{"contents":[],`+tools+`}`))
	if len(ev) != 1 {
		t.Fatalf("events: %v", ev)
	}
	var r struct {
		Candidates []struct {
			Content struct {
				Role  string
				Parts []struct {
					Text         *string
					FunctionCall *struct {
						ID, Name string
						Args     map[string]string
					}
				}
			}
			FinishReason string
		}
	}
	if err := json.Unmarshal([]byte(ev[0][1]), &r); err != nil {
		t.Fatal(err)
	}
	parts := r.Candidates[0].Content.Parts
	if len(parts) != 2 || *parts[0].Text != "Looking." || parts[1].FunctionCall == nil || parts[1].FunctionCall.Name != "read_file" ||
		parts[1].FunctionCall.ID != "call_1" || parts[1].FunctionCall.Args["file_path"] != "app.py" || r.Candidates[0].Content.Role != "model" {
		t.Fatalf("function call: %s", ev[0][1])
	}
	if got := s.ModelRequests()[0].Tools; strings.Join(got, ",") != "read_file,mcp_memnode_search" {
		t.Fatalf("tools = %v", got)
	}
	// A side request in JSON mode (routing, next-speaker checks) gets a plain JSON answer and
	// takes no turn when it offers no tools.
	resp := post(t, s.URL+"/v1beta/models/gemini-2.5-flash-lite:generateContent", `{"contents":[],"generationConfig":{"responseMimeType":"application/json"}}`)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("side request answered as %q", ct)
	}
	ev = sseEvents(t, post(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", `{"contents":[],`+tools+`}`))
	if !strings.Contains(ev[0][1], `"text":"Fixed."`) || !strings.Contains(ev[0][1], `"finishReason":"STOP"`) {
		t.Fatalf("final text: %v", ev)
	}
	if (GeminiAPI{}).Serves("GET", "/v1beta/models/x:generateContent") || !(GeminiAPI{}).Serves("POST", "/v1beta/models/x:generateContent") {
		t.Fatal("Serves")
	}
}

package agentcli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// Call is one tool call the fake model makes.
type Call struct {
	// ID is the call's id; "" gets a generated one (call_<n>).
	ID   string
	Name string
	// Args are the call's JSON arguments (any value json.Marshal takes; nil is {}).
	Args any
	// Input, when set, makes the call a freeform custom tool call with this raw input
	// (the Responses API's custom_tool_call, e.g. Codex's apply_patch); Args is then unused.
	Input string
	// Namespace is the Responses API function's namespace (Codex's deferred MCP tools:
	// "mcp__memnode" with Name "search").
	Namespace string
}

// Turn is one model answer: the tool calls it makes, or, when there are none, its final
// text. Text beside calls is sent before them.
type Turn struct {
	Calls []Call
	Text  string
	// InputTokens and OutputTokens, when > 0, are the usage the answer reports (wires that
	// report usage; AnthropicMessages), instead of the wire's small fixed numbers.
	InputTokens, OutputTokens int
}

// Request is one recorded HTTP request to the fake server.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the request body, gunzipped when it came gzip-encoded.
	Body []byte
	// Model marks a request the wire served as a model request; Tools are the names of
	// the tools it offered the model.
	Model bool
	Tools []string
}

// Contains reports whether the body holds s (as JSON encodes it: use plain text without
// quotes or backslashes, or search the decoded form yourself).
func (r Request) Contains(s string) bool { return bytes.Contains(r.Body, []byte(s)) }

// HasTool reports whether the request offered the model a tool whose name starts with prefix.
func (r Request) HasTool(prefix string) bool {
	for _, t := range r.Tools {
		if strings.HasPrefix(t, prefix) {
			return true
		}
	}
	return false
}

// Wire is one provider's wire format.
type Wire interface {
	// Serves reports whether method and path are this format's model endpoint.
	Serves(method, path string) bool
	// Tools lists the names of the tools a model request offers (for Sequence and asserts).
	Tools(body []byte) []string
	// Reply writes turn as the answer to the model request with body. Every call in turn
	// has its ID set.
	Reply(w http.ResponseWriter, body []byte, turn Turn) error
}

// Script chooses the fake model's answer to a model request. It is called with the
// server's lock released, one request at a time.
type Script interface {
	Next(req Request) Turn
}

// ScriptFunc is a Script that is a function.
type ScriptFunc func(Request) Turn

// Next implements Script.
func (f ScriptFunc) Next(req Request) Turn { return f(req) }

// sequence is Sequence's Script.
type sequence struct {
	mu    sync.Mutex
	turns []Turn
}

// Sequence answers each model request that offers tools with the next of turns; requests
// without tools (an agent's side requests: titles, summaries) get a short text and take no
// turn; after the last turn every request gets "Done.".
func Sequence(turns ...Turn) Script { return &sequence{turns: turns} }

func (s *sequence) Next(req Request) Turn {
	if len(req.Tools) == 0 {
		return Turn{Text: "OK."}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.turns) == 0 {
		return Turn{Text: "Done."}
	}
	t := s.turns[0]
	s.turns = s.turns[1:]
	return t
}

// Server is a scripted fake model server on 127.0.0.1.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:PORT), without a path.
	URL string

	tb     testing.TB
	wire   Wire
	srv    *http.Server
	done   chan struct{}
	script Script

	serial sync.Mutex // model requests are answered one at a time, in arrival order

	mu    sync.Mutex
	reqs  []Request
	calls int
}

// NewServer starts a fake model server answering wire's model requests from script. It is
// closed when the test ends.
func NewServer(tb testing.TB, wire Wire, script Script) *Server {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("listen for the fake model server: %v", err)
	}
	s := &Server{URL: "http://" + l.Addr().String(), tb: tb, wire: wire, script: script, done: make(chan struct{})}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.handle)}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(l) // ends with ErrServerClosed at Close
	}()
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server and waits for it; it is idempotent.
func (s *Server) Close() {
	_ = s.srv.Close()
	<-s.done
}

// Requests returns every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// ModelRequests returns the model requests received so far, in arrival order.
func (s *Server) ModelRequests() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Model {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Model: s.wire.Serves(r.Method, r.URL.Path)}
	if req.Model {
		req.Tools = s.wire.Tools(body)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	if !req.Model {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"type":"not_found_error","message":"the fake model server serves only its model endpoint"}}`)
		return
	}
	s.serial.Lock()
	defer s.serial.Unlock()
	turn := s.script.Next(req)
	s.mu.Lock()
	for i := range turn.Calls {
		if turn.Calls[i].ID == "" {
			s.calls++
			turn.Calls[i].ID = fmt.Sprintf("call_%d", s.calls)
		}
	}
	s.mu.Unlock()
	if err := s.wire.Reply(w, body, turn); err != nil {
		s.tb.Logf("fake model server: reply to %s %s: %v", r.Method, r.URL.Path, err)
	}
}

func readBody(r *http.Request) ([]byte, error) {
	var rd io.Reader = r.Body
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, fmt.Errorf("gunzip request: %w", err)
		}
		rd = zr
	}
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("read request: %w", err)
	}
	return b, nil
}

// argsJSON renders a call's Args as a JSON object text.
func argsJSON(c Call) string {
	if c.Args == nil {
		return "{}"
	}
	if raw, ok := c.Args.(json.RawMessage); ok {
		return string(raw)
	}
	b, err := json.Marshal(c.Args)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// sse writes Server-Sent Events; it is one response's writer.
type sse struct {
	w   http.ResponseWriter
	err error
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w}
}

// event writes one event; name "" omits the event line. data is JSON-encoded unless it is
// a string.
func (s *sse) event(name string, data any) {
	if s.err != nil {
		return
	}
	var payload []byte
	switch d := data.(type) {
	case string:
		payload = []byte(d)
	default:
		payload, s.err = json.Marshal(d)
		if s.err != nil {
			return
		}
	}
	var buf bytes.Buffer
	if name != "" {
		fmt.Fprintf(&buf, "event: %s\n", name)
	}
	fmt.Fprintf(&buf, "data: %s\n\n", payload)
	if _, s.err = s.w.Write(buf.Bytes()); s.err == nil {
		if f, ok := s.w.(http.Flusher); ok {
			f.Flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}

// toolNames reads the names of a request body's "tools" array, looking at name and at
// function.name (OpenAI chat's nesting).
func toolNames(body []byte) []string {
	var req struct {
		Tools []struct {
			Name     string `json:"name"`
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"` // a Responses API namespace
		} `json:"tools"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []string
	for _, t := range req.Tools {
		switch {
		case t.Name != "" && len(t.Tools) > 0:
			for _, sub := range t.Tools {
				out = append(out, t.Name+"__"+sub.Name)
			}
		case t.Name != "":
			out = append(out, t.Name)
		case t.Function.Name != "":
			out = append(out, t.Function.Name)
		case t.Type != "":
			out = append(out, t.Type) // a hosted tool (web_search, …)
		}
	}
	return out
}

// streamed reports whether a request body asks for a streamed answer.
func streamed(body []byte) bool {
	var req struct {
		Stream bool `json:"stream"`
	}
	_ = json.Unmarshal(body, &req)
	return req.Stream
}

package e2ekit

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/memnode/memnode/internal/secretsample"
)

// RecordingProvider is a real HTTP server on 127.0.0.1 speaking the Anthropic Messages
// wire format. It keeps every request body, answers an observation request with one
// observation and a summary request with one summary, whatever it was sent.
type RecordingProvider struct {
	Url    string
	mu     sync.Mutex
	bodies [][]byte
}

func NewRecordingProvider(t *testing.T, key string) *RecordingProvider {
	t.Helper()
	p := &RecordingProvider{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.bodies = append(p.bodies, body)
		p.mu.Unlock()
		if r.Header.Get("x-api-key") != key {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		text := "<observation><type>change</type><title>Provider compressed a call</title><facts><fact>it ran</fact></facts></observation>"
		if bytes.Contains(body, []byte("SESSION SUMMARY")) {
			text = "<summary><request>provider summary</request><completed>it was done</completed></summary>"
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake-1",
			"content":     []map[string]any{{"type": "text", "text": text}},
			"stop_reason": "end_turn", "usage": map[string]any{"input_tokens": len(body) / 4, "output_tokens": 20},
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	p.Url = "http://" + ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return p
}

func (p *RecordingProvider) Received() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Join(p.bodies, []byte("\n"))
}

// Planted collects what must never be stored or sent (secret) and what must arrive
// (visible), so that a path that silently stores nothing cannot pass.
type Planted struct {
	Secret  []string
	visible []string
}

// Priv returns a <private> block holding a fresh marker, and remembers the marker.
func (pl *Planted) Priv(name string) string {
	m := "PRIVMK-" + name + "-q7x"
	pl.Secret = append(pl.Secret, m)
	return "<private>" + m + "</private>"
}

// Marker remembers a marker that some other rule (stray tag, private turn) must hide.
func (pl *Planted) Marker(name string) string {
	m := "PRIVMK-" + name + "-q7x"
	pl.Secret = append(pl.Secret, m)
	return m
}

// Sec remembers a secret planted as is.
func (pl *Planted) Sec(s string) string { pl.Secret = append(pl.Secret, s); return s }

func (pl *Planted) Vis(name string) string {
	v := "VISIBLE-" + name
	pl.visible = append(pl.visible, v)
	return v
}

// Secrets returns text holding one of each secret kind and shape (internal/secretsample,
// privacy/SECRETS.md), a line each, each made unique by tag (two letters).
func (pl *Planted) Secrets(tag string) string {
	var lines []string
	for _, c := range secretsample.All(tag) {
		lines = append(lines, c.Line)
		pl.Sec(c.Secret)
		if strings.Contains(c.Secret, "\n") {
			// A key block: none of its lines may survive either.
			for _, l := range strings.Split(c.Secret, "\n") {
				if len(l) >= 40 {
					pl.Sec(l)
				}
			}
		}
	}
	return strings.Join(lines, "\n")
}

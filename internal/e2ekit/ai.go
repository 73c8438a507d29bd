package e2ekit

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// FakeAnthropic is a real HTTP server on 127.0.0.1 speaking the Anthropic Messages wire
// format. It answers slowly, with one <observation> per marker found in the request.
type FakeAnthropic struct {
	srv      *http.Server
	Url      string
	Requests atomic.Int64
	delay    time.Duration
}

var MarkerRe = regexp.MustCompile(`mk-\d{4}`)

// UseFakeAnthropic points in (not started yet) at a fake Anthropic server at url: the key
// in its environment, the provider chain and base URL in its settings.json.
func UseFakeAnthropic(t *testing.T, in *Instance, key, url string) {
	t.Helper()
	in.Extra = append(in.Extra, "MEMNODE_ANTHROPIC_API_KEY="+key)
	settings := fmt.Sprintf(`{"ai_providers":["anthropic"],"ai_base_urls":{"anthropic":%q},"ai_models":{"anthropic":"claude-fake-1"}}`, url)
	if err := os.WriteFile(filepath.Join(in.DataDir, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
}

func NewFakeAnthropic(t *testing.T, key string, delay time.Duration) *FakeAnthropic {
	t.Helper()
	f := &FakeAnthropic{delay: delay}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		f.Requests.Add(1)
		if r.Header.Get("x-api-key") != key || r.Header.Get("anthropic-version") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		select { // a slow provider; the node may be killed meanwhile
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
		seen := map[string]bool{}
		var xml strings.Builder
		for _, m := range MarkerRe.FindAllString(string(body), -1) {
			if seen[m] {
				continue
			}
			seen[m] = true
			fmt.Fprintf(&xml, "<observation><type>change</type><title>Ran the %s job</title><facts><fact>job %s ran</fact></facts></observation>\n", m, m)
		}
		resp := map[string]any{
			"id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-fake-1",
			"content":     []map[string]any{{"type": "text", "text": xml.String()}},
			"stop_reason": "end_turn",
			"usage":       map[string]any{"input_tokens": len(body) / 4, "output_tokens": xml.Len() / 4},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.srv = &http.Server{Handler: mux}
	f.Url = "http://" + ln.Addr().String()
	go f.srv.Serve(ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

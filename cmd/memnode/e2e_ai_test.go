package main

import (
	"bytes"
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
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/testkit"
)

// fakeAnthropic is a real HTTP server on 127.0.0.1 speaking the Anthropic Messages wire
// format. It answers slowly, with one <observation> per marker found in the request.
type fakeAnthropic struct {
	srv      *http.Server
	url      string
	requests atomic.Int64
	delay    time.Duration
}

var markerRe = regexp.MustCompile(`mk-\d{4}`)

// useFakeAnthropic points in (not started yet) at a fake Anthropic server at url: the key
// in its environment, the provider chain and base URL in its settings.json.
func useFakeAnthropic(t *testing.T, in *instance, key, url string) {
	t.Helper()
	in.extra = append(in.extra, "MEMNODE_ANTHROPIC_API_KEY="+key)
	settings := fmt.Sprintf(`{"ai_providers":["anthropic"],"ai_base_urls":{"anthropic":%q},"ai_models":{"anthropic":"claude-fake-1"}}`, url)
	if err := os.WriteFile(filepath.Join(in.dataDir, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newFakeAnthropic(t *testing.T, key string, delay time.Duration) *fakeAnthropic {
	t.Helper()
	f := &fakeAnthropic{delay: delay}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		f.requests.Add(1)
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
		for _, m := range markerRe.FindAllString(string(body), -1) {
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
	f.url = "http://" + ln.Addr().String()
	go f.srv.Serve(ln)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// TestKill9WithSlowProvider: 1,000 events queued against a slow provider, the node killed
// mid-way: after restart every event becomes an observation, none twice.
func TestKill9WithSlowProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short")
	}
	const total = 1000
	key := "sk-ant-test-" + strings.Repeat("k", 24)
	fake := newFakeAnthropic(t, key, 150*time.Millisecond)
	in := newInstance(t)
	useFakeAnthropic(t, in, key, fake.url)
	in.start()
	tok, url := in.token(), fmt.Sprintf("http://127.0.0.1:%d/api/events", in.port)
	for i := 0; i < total; i++ {
		id := fmt.Sprintf("mk-%04d", i)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(observationEvent(id, fmt.Sprintf("s%d", i%10), "slowai", "make "+id)))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("event %d: %s", i, resp.Status)
		}
	}
	db := in.db()
	testkit.WaitFor(t, "some observations from the provider", 60*time.Second, func() bool {
		return in.count(db, "SELECT COUNT(*) FROM observations WHERE model = 'claude-fake-1'") >= 50
	})
	syscall.Kill(in.pid(), syscall.SIGKILL)
	before := in.count(db, "SELECT COUNT(*) FROM observations")
	if before >= total {
		t.Fatalf("the queue had drained before the kill (%d observations)", before)
	}
	in.start()
	testkit.WaitFor(t, "the queue to drain after restart", 120*time.Second, func() bool {
		return in.queued() == 0
	})
	if n := in.count(db, "SELECT COUNT(*) FROM observations WHERE project = 'slowai'"); n != total {
		t.Fatalf("observations = %d, want exactly %d (killed at %d)", n, total, before)
	}
	distinct := in.count(db, "SELECT COUNT(DISTINCT title) FROM observations WHERE project = 'slowai'")
	if distinct != total {
		t.Fatalf("distinct observations = %d, want %d: some event was duplicated or lost", distinct, total)
	}
	if n := in.count(db, "SELECT COUNT(*) FROM observations WHERE discovery_tokens > 0 AND model = 'claude-fake-1'"); n != total {
		t.Errorf("observations recording the provider's model and tokens = %d, want %d", n, total)
	}
	// memnode status reports the provider's calls and tokens (budget unlimited: -1).
	var st struct {
		Status struct {
			Compressor struct {
				AI struct {
					Providers []struct {
						Name        string `json:"name"`
						Calls       int64  `json:"calls"`
						InputTokens int64  `json:"input_tokens"`
					} `json:"providers"`
					BudgetLeft int64 `json:"budget_left"`
				} `json:"ai"`
			} `json:"compressor"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(in.mustRun(nil, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if ps := st.Status.Compressor.AI.Providers; len(ps) == 0 || ps[0].Calls == 0 || ps[0].InputTokens == 0 || st.Status.Compressor.AI.BudgetLeft != -1 {
		t.Errorf("status lacks provider usage: %+v", st.Status.Compressor.AI)
	}
	if human := in.mustRun(nil, "status"); !strings.Contains(human, "provider:") || strings.Contains(human, key) {
		t.Errorf("human status: %s", human)
	}
	// The key never reaches the data dir (settings, DB, logs).
	grepDataDir(t, in.dataDir, key)
	t.Logf("killed after %d observations; %d provider requests", before, fake.requests.Load())
}

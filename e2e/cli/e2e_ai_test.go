package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/testkit"
)

// TestKill9WithSlowProvider: 1,000 events queued against a slow provider, the node killed
// mid-way: after restart every event becomes an observation, none twice.
func TestKill9WithSlowProvider(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped in -short")
	}
	const total = 1000
	key := "sk-ant-test-" + strings.Repeat("k", 24)
	fake := e2ekit.NewFakeAnthropic(t, key, 150*time.Millisecond)
	in := e2ekit.NewInstance(t)
	e2ekit.UseFakeAnthropic(t, in, key, fake.Url)
	in.Start()
	tok, url := in.Token(), fmt.Sprintf("http://127.0.0.1:%d/api/events", in.Port)
	for i := 0; i < total; i++ {
		id := fmt.Sprintf("mk-%04d", i)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(e2ekit.ObservationEvent(id, fmt.Sprintf("s%d", i%10), "slowai", "make "+id)))
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
	db := in.Db()
	testkit.WaitFor(t, "some observations from the provider", 60*time.Second, func() bool {
		return in.Count(db, "SELECT COUNT(*) FROM observations WHERE model = 'claude-fake-1'") >= 50
	})
	syscall.Kill(in.Pid(), syscall.SIGKILL)
	before := in.Count(db, "SELECT COUNT(*) FROM observations")
	if before >= total {
		t.Fatalf("the queue had drained before the kill (%d observations)", before)
	}
	in.Start()
	testkit.WaitFor(t, "the queue to drain after restart", 120*time.Second, func() bool {
		return in.Queued() == 0
	})
	if n := in.Count(db, "SELECT COUNT(*) FROM observations WHERE project = 'slowai'"); n != total {
		t.Fatalf("observations = %d, want exactly %d (killed at %d)", n, total, before)
	}
	distinct := in.Count(db, "SELECT COUNT(DISTINCT title) FROM observations WHERE project = 'slowai'")
	if distinct != total {
		t.Fatalf("distinct observations = %d, want %d: some event was duplicated or lost", distinct, total)
	}
	if n := in.Count(db, "SELECT COUNT(*) FROM observations WHERE discovery_tokens > 0 AND model = 'claude-fake-1'"); n != total {
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
	if err := json.Unmarshal([]byte(in.MustRun(nil, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if ps := st.Status.Compressor.AI.Providers; len(ps) == 0 || ps[0].Calls == 0 || ps[0].InputTokens == 0 || st.Status.Compressor.AI.BudgetLeft != -1 {
		t.Errorf("status lacks provider usage: %+v", st.Status.Compressor.AI)
	}
	if human := in.MustRun(nil, "status"); !strings.Contains(human, "provider:") || strings.Contains(human, key) {
		t.Errorf("human status: %s", human)
	}
	// The key never reaches the data dir (settings, DB, logs).
	e2ekit.GrepDataDir(t, in.DataDir, key)
	t.Logf("killed after %d observations; %d provider requests", before, fake.Requests.Load())
}

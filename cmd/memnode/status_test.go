package main

import (
	"strings"
	"testing"

	"github.com/memnode/memnode/api/apitype"
)

func TestWriteStatusForPeople(t *testing.T) {
	st := apitype.Status{
		Records: apitype.RecordCounts{Sessions: 2, Prompts: 1, Observations: 12, Summaries: 1, Ops: 16},
		Queue:   apitype.QueueStatus{Waiting: 3, Ingested: 15, Processed: 12, Failures: 1},
		Compressor: apitype.CompressorStatus{Name: "chain", AI: &apitype.AIStatus{BudgetLeft: 3800, BudgetUsed: 1200, BudgetLimit: 5000, Providers: []apitype.ProviderStatus{
			{Name: "claude-code", Model: "haiku", CLI: "/usr/local/bin/claude", Calls: 2, InputTokens: 900, OutputTokens: 300},
			{Name: "anthropic", Model: "claude-x", Calls: 4, InputTokens: 1200, OutputTokens: 300,
				Errors: map[string]int64{"rate_limit": 2, "auth": 1}, LastError: "429 slow down"},
		}}},
		Embed:   apitype.EmbedStatus{State: "off — no model"},
		Sync:    apitype.SyncStatus{State: "off (sync_disabled)"},
		Storage: apitype.StorageStatus{State: apitype.StorageOK},
	}
	var b strings.Builder
	writeStatus(&b, st, "127.0.0.1:38800")
	want := `  records:     12 observations, 2 sessions, 1 prompt, 1 summary (16 ops, 0 tombstones)
  queue:       3 waiting; since start 15 ingested, 12 processed, 1 failure
  tcp:         127.0.0.1:38800
  compressor:  chain
  ai budget:   1200 of 5000 tokens used today, 3800 left
  provider:    claude-code (haiku) via /usr/local/bin/claude: 2 calls, 900 in / 300 out tokens
  provider:    anthropic (claude-x): 4 calls, 1200 in / 300 out tokens, errors: auth 1 rate_limit 2; last error: 429 slow down
  embeddings:  off — no model
  sync:        off (sync_disabled)
  storage:     ok
`
	if got := b.String(); got != want {
		t.Errorf("status for people:\n%s\nwant:\n%s", got, want)
	}

	st.Storage = apitype.StorageStatus{State: apitype.StorageCorrupt, Message: "database disk image is malformed; stop the node and run 'memnode repair'"}
	b.Reset()
	writeStatus(&b, st, "127.0.0.1:38800")
	first, _, _ := strings.Cut(b.String(), "\n")
	if first != "  state:       not ready: the database is corrupt; 'memnode stop', then 'memnode repair'" {
		t.Errorf("a corrupt database is not the first line: %q", first)
	}
	if !strings.Contains(b.String(), "records:     unreadable\n") || !strings.Contains(b.String(), "storage:     corrupt: database disk image") {
		t.Errorf("a corrupt database's records and storage lines:\n%s", b.String())
	}
	if strings.Contains(b.String(), "{") {
		t.Errorf("status for people shows JSON:\n%s", b.String())
	}
}

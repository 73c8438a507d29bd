package llm

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/ai/offline"
	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/memory"
)

// The real Codex CLI and Gemini CLI as compressors (cmd/memnode's TestClaudeCodeCompressor
// drives Claude Code through a whole node): the same pinned npm packages as the capture
// tests, against the scripted model servers of internal/agentcli.
const (
	realClaudeVersion = "2.1.332"
	realCodexVersion  = "0.171.0"
	realGeminiVersion = "0.61.0"
)

var realMarker = regexp.MustCompile(`mk-\d{4}`)

// observerScript answers the compressor's request with one observation per marker seen, and
// reports the usage given.
func observerScript(t *testing.T) agentcli.Script {
	return agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn {
		var xml strings.Builder
		seen := map[string]bool{}
		for _, m := range realMarker.FindAllString(string(r.Body), -1) {
			if !seen[m] {
				seen[m] = true
				fmt.Fprintf(&xml, "<observation><type>change</type><title>Ran job %s</title></observation>\n", m)
			}
		}
		return agentcli.Turn{Text: xml.String()}
	})
}

// TestRealCodexAndGeminiCLICompress: codex exec and gemini -p, run by the provider, turn two
// tool calls into two observations in one invocation, with the tokens the CLI reported; the
// request reached the model with the observer prompt and no tools (Codex: only
// request_user_input).
func TestRealCodexAndGeminiCLICompress(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: real agent CLIs")
	}
	calls := []ai.ToolCall{
		{SessionID: "s", Project: "p", ToolName: "Bash", ToolInput: []byte(`{"command":"make mk-0001"}`), ToolResponse: []byte(`{"stdout":"ok"}`), At: time.Now()},
		{SessionID: "s", Project: "p", ToolName: "Bash", ToolInput: []byte(`{"command":"make mk-0002"}`), ToolResponse: []byte(`{"stdout":"ok"}`), At: time.Now()},
	}
	for _, tc := range []struct {
		kind, pkg, version, bin string
		wire                    agentcli.Wire
		setup                   func(t *testing.T, home, url string) []string
		// allowed are the only tools the CLI may offer its model.
		allowed []string
	}{
		{KindCodex, "@openai/codex", realCodexVersion, "codex", &agentcli.OpenAIResponses{},
			func(t *testing.T, home, url string) []string {
				writeTestFile(t, filepath.Join(home, ".codex", "config.toml"), `model_provider = "fake"
check_for_update_on_startup = false
[analytics]
enabled = false
[model_providers.fake]
name = "fake"
base_url = "`+url+`/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
`)
				return []string{"FAKE_OPENAI_KEY=sk-test-not-a-key"}
			}, []string{"request_user_input"}}, // no flag removes it; nobody answers it headless
		{KindGeminiCLI, "@google/gemini-cli", realGeminiVersion, "gemini", agentcli.GeminiAPI{},
			func(t *testing.T, home, url string) []string {
				writeTestFile(t, filepath.Join(home, ".gemini", "settings.json"), `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}, "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}}`)
				return []string{"GEMINI_API_KEY=fake-gemini-key", "GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_TELEMETRY_ENABLED=false"}
			}, nil},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			exe := agentcli.Install(t, tc.pkg, tc.version, tc.bin)
			srv := agentcli.NewServer(t, tc.wire, observerScript(t))
			home := agentcli.NewHome(t)
			env := agentcli.Env(home, tc.setup(t, home, srv.URL)...)
			p, err := NewCLI(CLIConfig{Kind: tc.kind, Path: exe, WorkDir: filepath.Join(t.TempDir(), memory.CompressorProject), Env: env})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			c, err := NewCompressor(CompressorConfig{Provider: p, Estimate: p.Estimate})
			if err != nil {
				t.Fatal(err)
			}
			obs, u, err := c.Observe(context.Background(), calls)
			if err != nil {
				t.Fatal(err)
			}
			if len(obs) != 2 || !strings.Contains(obs[0].Title+obs[1].Title, "mk-0001") || u.InputTokens != 10 || u.OutputTokens != 10 {
				t.Errorf("observations %+v, usage %+v: want 2 from one answer and the reported 10/10 tokens", obs, u)
			}
			reqs := srv.ModelRequests()
			if len(reqs) != 1 {
				t.Fatalf("%d model requests for 2 tool calls, want 1", len(reqs))
			}
			if !reqs[0].Contains("You are a memory observer") || !reqs[0].Contains("mk-0002") {
				t.Errorf("the model did not get the observer prompt and the tool calls")
			}
			for _, tool := range reqs[0].Tools {
				if !slices.Contains(tc.allowed, tool) {
					t.Errorf("%s offered its model the tool %q (all: %v)", tc.kind, tool, reqs[0].Tools)
				}
			}
			t.Logf("%s offered its model: %v", tc.kind, reqs[0].Tools)
		})
	}
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// failingAnthropic is the Anthropic Messages wire answering every request with one HTTP
// error.
type failingAnthropic struct {
	agentcli.AnthropicMessages
	status int
	body   string
}

func (f *failingAnthropic) Reply(w http.ResponseWriter, _ []byte, _ agentcli.Turn) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	_, err := w.Write([]byte(f.body))
	return err
}

// TestRealClaudeCodeFailuresSetAside: the real Claude Code CLI's answers to a rejected key
// (HTTP 401) and a rate limit (429, after its own retry) set the claude-code provider aside
// in a chain, for an hour and five minutes: the offline compressor makes the observation, and
// the next batch does not start claude again.
func TestRealClaudeCodeFailuresSetAside(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: real agent CLI")
	}
	claude := agentcli.Install(t, "@anthropic-ai/claude-code", realClaudeVersion, "claude")
	call := []ai.ToolCall{{SessionID: "s", Project: "p", ToolName: "Bash", ToolInput: []byte(`{"command":"make mk-0001"}`), ToolResponse: []byte(`{"stdout":"ok"}`), At: time.Now()}}
	for _, tc := range []struct {
		name   string
		status int
		body   string
		class  Class
		aside  time.Duration
	}{
		{"401", http.StatusUnauthorized, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, AuthInvalid, DefaultAuthCooldown},
		{"429", http.StatusTooManyRequests, `{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit."}}`, RateLimit, cliRateLimitCooldown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agentcli.NewServer(t, &failingAnthropic{status: tc.status, body: tc.body}, agentcli.Sequence())
			home := agentcli.NewHome(t)
			p, err := NewCLI(CLIConfig{Kind: KindClaudeCode, Path: claude, WorkDir: filepath.Join(t.TempDir(), memory.CompressorProject),
				Env: agentcli.Env(home, "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key")})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			comp, err := NewCompressor(CompressorConfig{Provider: p, Estimate: p.Estimate, MaxAttempts: 2})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			ch, err := NewChain(ChainConfig{Compressors: []*Compressor{comp}, Fallback: offline.New(), Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if obs, u, err := ch.Observe(context.Background(), call); err != nil || len(obs) != 1 || u.Model != offline.Model {
					t.Fatalf("observe = %v %+v %v, want the offline compressor's observation", obs, u, err)
				}
			}
			st := ch.Stats()[0]
			if st.Errors[tc.class] != 1 || !st.DisabledUntil.Equal(now.Add(tc.aside)) {
				t.Errorf("stats %+v: want one %s and set aside until now+%s", st, tc.class, tc.aside)
			}
			if n := len(srv.ModelRequests()); n == 0 || n > 2 {
				t.Errorf("%d model requests: want claude's first answer and at most its own retry, then nothing", n)
			}
		})
	}
}

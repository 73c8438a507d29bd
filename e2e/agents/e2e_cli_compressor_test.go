package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/ai/llm"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/memory"
)

// compressorMarker is in the observer system prompt memnode sends: it tells the fake model
// server a compression request from a user session's.
const compressorMarker = "You are a memory observer"

// cliUsageIn and cliUsageOut are what the fake model reports for each compression request.
const cliUsageIn, cliUsageOut = 5000, 500

// TestClaudeCodeCompressor is issue 32's done-when for agent CLIs as compressors, on the
// real Claude Code CLI against the scripted Anthropic server: a real Claude Code session
// (memnode's hooks installed) runs two tool calls, with a private tag and a secret in it;
// the node compresses them by running `claude -p` itself. Its tool calls become the model's
// observations in one invocation, its summary in a second (ai_cli_batch_wait); what claude -p sent carries neither the private
// text nor the secret; the compression runs are never recorded (no session but the user's);
// status and doctor name the CLI and the budget; a daily budget of N tokens stops the CLI
// at N, the offline compressor taking the rest.
//
// It runs first, alone (no t.Parallel): that the session's two tool calls reach claude -p in
// one batch depends on Claude Code making them within the batch wait (5 s), and the node's
// own claude -p runs are agent CLIs that hold no slot (cliSlots).
func TestClaudeCodeCompressor(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short: real Claude Code CLI")
	}
	claude := installCLI(t, claudePkg, claudeVersion, "claude")
	const awsKey = "AKIAZ7Q4M2X9K3L8P5R1"
	files := map[string]string{"deploy.env": "REGION=eu-west-1\nAWS_ACCESS_KEY_ID=" + awsKey + "\n"}
	user := agentcli.Sequence(
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Bash", Args: map[string]string{"command": "cat deploy.env"}}}},
		agentcli.Turn{Calls: []agentcli.Call{{Name: "Bash", Args: map[string]string{"command": "echo deployed-mk-0001"}}}},
		agentcli.Turn{Text: "Deployed."},
	)
	script := agentcli.ScriptFunc(func(r agentcli.Request) agentcli.Turn {
		if !r.Contains(compressorMarker) {
			return user.Next(r)
		}
		var xml strings.Builder
		for _, m := range e2ekit.MarkerRe.FindAllString(requestText(r), -1) {
			fmt.Fprintf(&xml, "<observation><type>change</type><title>LLM saw job %s</title><facts><fact>job %s ran</fact></facts></observation>\n", m, m)
		}
		if strings.Contains(requestText(r), "cat deploy.env") {
			xml.WriteString("<observation><type>discovery</type><title>LLM read deploy.env</title></observation>\n")
		}
		if strings.Contains(requestText(r), "SESSION SUMMARY") {
			xml.Reset()
			xml.WriteString("<summary><request>deploy</request><completed>LLM summary</completed></summary>")
		}
		return agentcli.Turn{Text: xml.String(), InputTokens: cliUsageIn, OutputTokens: cliUsageOut}
	})
	rig := newAgentRig(t, files, &agentcli.AnthropicMessages{}, script)
	fakeEnv := []string{"ANTHROPIC_BASE_URL=" + rig.model.URL, "ANTHROPIC_API_KEY=sk-ant-test-not-a-key",
		"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"}
	rig.agentEnv = fakeEnv
	// The node runs claude -p with its own environment: the same login (here the fake's).
	rig.Extra = append(rig.Extra, fakeEnv...)
	const budget = 30000
	// The batch wait is short for the test (default 20 s): Claude Code's tool calls against the
	// instant fake model come well within it.
	settings := fmt.Sprintf(`{"ai_providers":["claude-code"],"ai_cli_paths":{"claude-code":%q},"ai_daily_token_budget":%d,"ai_cli_batch_wait":"5s"}`, claude, budget)
	if err := os.WriteFile(filepath.Join(rig.DataDir, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	rig.Start()
	rig.MustRun(nil, "install", "claude-code") // memnode's hooks are in the HOME claude -p runs in too

	rig.runAgent(claude, "-p", "Deploy it. <private>the staging password is "+plantedSecret+"</private>",
		"--output-format", "json", "--allowedTools", "Bash", "--model", "claude-sonnet-4-5")
	db := rig.Db()
	project := filepath.Base(rig.project)
	testkit.WaitForState(t, "the session's tool calls compressed by claude -p", 90*time.Second, func() (bool, string) {
		n := rig.Count(db, "SELECT COUNT(*) FROM observations WHERE project = ? AND title LIKE 'LLM %' AND model LIKE 'claude%'", project)
		return n >= 2 && rig.Queued() == 0, strings.Join(rig.observationTexts(), "\n")
	})
	compressions := func() []agentcli.Request {
		var out []agentcli.Request
		for _, r := range rig.model.ModelRequests() {
			if r.Contains(compressorMarker) {
				out = append(out, r)
			}
		}
		return out
	}
	calls := compressions()
	if len(calls) == 0 || len(calls) > 2 {
		t.Errorf("%d claude -p runs for a session of 2 tool calls and a summary, want one for the calls and one for the summary (batched)", len(calls))
	}
	for _, r := range calls {
		if len(r.Tools) > 0 {
			t.Errorf("claude -p offered its model tools: %v", r.Tools)
		}
		body := requestText(r)
		for _, leak := range []string{plantedSecret, awsKey, "staging password"} {
			if strings.Contains(body, leak) || bytes.Contains(r.Body, []byte(leak)) {
				t.Errorf("the compressor's request carries %q:\n%.2000s", leak, body)
			}
		}
	}
	if !strings.Contains(requestText(calls[0]), "cat deploy.env") {
		t.Errorf("the compressor's request does not carry the session's tool calls:\n%.2000s", requestText(calls[0]))
	}

	// The compression runs are never recorded: the user's session is the only one.
	if n := rig.Count(db, "SELECT COUNT(*) FROM sessions"); n != 1 {
		t.Errorf("%d sessions recorded, want only the user's: claude -p's own runs were recorded", n)
	}
	if n := rig.Count(db, "SELECT COUNT(*) FROM sessions WHERE project = ?", memory.CompressorProject) +
		rig.Count(db, "SELECT COUNT(*) FROM observations WHERE project != ?", project); n != 0 {
		t.Errorf("%d records of another project than the user's (%s)", n, memory.CompressorProject)
	}

	// status and doctor name the CLI, and the budget used.
	var st struct {
		Status struct {
			Compressor struct {
				AI struct {
					Providers []struct {
						Name  string `json:"name"`
						CLI   string `json:"cli"`
						Calls int64  `json:"calls"`
					} `json:"providers"`
					BudgetUsed  int64 `json:"budget_used"`
					BudgetLimit int64 `json:"budget_limit"`
				} `json:"ai"`
			} `json:"compressor"`
		} `json:"status"`
	}
	if err := json.Unmarshal([]byte(rig.MustRun(nil, "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	ai := st.Status.Compressor.AI
	if len(ai.Providers) < 1 || ai.Providers[0].Name != llm.KindClaudeCode || ai.Providers[0].CLI != claude ||
		ai.BudgetUsed != int64(len(compressions()))*(cliUsageIn+cliUsageOut) || ai.BudgetLimit != budget {
		t.Errorf("status: %+v, want claude-code via %s, %d tokens used of %d", ai, claude, len(compressions())*(cliUsageIn+cliUsageOut), budget)
	}
	if out := rig.MustRun(nil, "status"); !strings.Contains(out, "claude-code (haiku) via "+claude) || !strings.Contains(out, fmt.Sprintf("of %d tokens used today", budget)) {
		t.Errorf("memnode status does not name the CLI and the budget:\n%s", out)
	}
	if out := rig.Run(nil, "doctor").Stdout; !strings.Contains(out, "via "+claude) {
		t.Errorf("memnode doctor does not name the CLI:\n%s", out)
	}

	// A budget of N tokens: more sessions until the CLI stops; it never passes N.
	tok, url := rig.Token(), fmt.Sprintf("http://127.0.0.1:%d/api/events", rig.Port)
	for i := 2; i <= 8; i++ { // all at once: one batch wait, then one run per session
		id := fmt.Sprintf("mk-%04d", i)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(e2ekit.ObservationEvent(id, fmt.Sprintf("budget-%d", i), project, "make "+id)))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("event %s: %s", id, resp.Status)
		}
	}
	testkit.WaitFor(t, "the budget sessions compressed", 90*time.Second, func() bool { return rig.Queued() == 0 })
	runs := len(compressions())
	used := readBudget(t, rig.DataDir)
	t.Logf("claude -p runs: %d for the session (2 tool calls, 1 summary), %d in all; budget %d of %d tokens used", len(calls), runs, used, budget)
	if used != int64(runs)*(cliUsageIn+cliUsageOut) || used > budget {
		t.Errorf("%d claude -p runs, %d tokens recorded: want %d each and never more than %d", runs, used, cliUsageIn+cliUsageOut, budget)
	}
	if offline := rig.Count(db, "SELECT COUNT(*) FROM observations WHERE session_id LIKE 'budget-%' AND model = 'offline'"); offline == 0 {
		t.Errorf("the budget of %d never stopped claude -p (%d runs, %d tokens)", budget, runs, used)
	}
	if llmObs := rig.Count(db, "SELECT COUNT(*) FROM observations WHERE session_id LIKE 'budget-%' AND model LIKE 'claude%'"); llmObs == 0 {
		t.Errorf("no budget session was compressed by claude -p before the budget ran out")
	}
}

// readBudget is today's settled token usage from the data dir's budget file.
func readBudget(t *testing.T, dataDir string) int64 {
	t.Helper()
	var days map[string]int64
	if err := json.Unmarshal(e2ekit.ReadFile(t, filepath.Join(dataDir, "ai-budget.json")), &days); err != nil {
		t.Fatal(err)
	}
	return days[llm.Day(time.Now())]
}

// TestCLIKindsAgree: the settings accept exactly the agent CLI providers ai/llm runs.
func TestCLIKindsAgree(t *testing.T) {
	t.Parallel()
	if got, want := strings.Join(configs.AICLIKinds(), ","), strings.Join(llm.CLIKinds(), ","); got != want {
		t.Errorf("configs' agent CLI kinds %s, ai/llm's %s", got, want)
	}
	for _, k := range configs.AICLIKinds() {
		if !llm.IsCLIKind(k) {
			t.Errorf("%s is not an ai/llm agent CLI", k)
		}
	}
}

// TestAgentCLICompressorNotInstalled: an agent CLI provider whose executable is missing is
// set aside after the first batch (the offline compressor makes the observation), and every
// place says so with what to do: status ("not found"), doctor (install it or set
// ai_cli_paths), and the next session-start context's health line (pointing at doctor, not
// at a key).
func TestAgentCLICompressorNotInstalled(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("skipped in -short: real node")
	}
	in := e2ekit.NewInstance(t)
	missing := filepath.Join(t.TempDir(), "no-claude-here")
	settings := fmt.Sprintf(`{"ai_providers":["claude-code"],"ai_cli_paths":{"claude-code":%q},"ai_cli_batch_wait":"1s"}`, missing)
	if err := os.WriteFile(filepath.Join(in.DataDir, "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}
	in.Start()
	proj := e2ekit.GitDir(t, "notinstalled")
	payload := `{"session_id":"s-cli","cwd":` + e2ekit.JsonString(proj) + `,"hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"t-1","tool_input":{"command":"make mk-0001"},"tool_response":{"stdout":"done","exitCode":0}}`
	if r := in.RunLean([]byte(payload), "hook", "claude-code", "observation"); r.Code != 0 {
		t.Fatalf("observation hook: exit %d %s", r.Code, r.Stderr)
	}
	testkit.WaitForState(t, "the missing CLI set aside", 30*time.Second, func() (bool, string) {
		out := in.MustRun(nil, "status")
		return strings.Contains(out, "via not found: "+missing) && strings.Contains(out, "skipped until") && in.Queued() == 0, out
	})
	if n := in.Count(in.Db(), "SELECT COUNT(*) FROM observations WHERE model = 'offline'"); n != 1 {
		t.Errorf("%d offline observations, want the event compressed offline", n)
	}
	if out := in.Run(nil, "doctor").Stdout; !strings.Contains(out, "memnode config set ai_cli_paths claude-code=") {
		t.Errorf("doctor does not say how to fix a missing agent CLI:\n%s", out)
	}
	text, _ := sessionStart(t, in, proj)
	if !strings.Contains(text, "AI provider claude-code is disabled until") || !strings.Contains(text, "'memnode doctor' says why") || strings.Contains(text, "memnode keys set claude-code") {
		t.Errorf("the context's health line does not point at doctor:\n%s", text)
	}
}

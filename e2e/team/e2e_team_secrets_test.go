package team

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/internal/rqlitetest"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/team"
)

// TestTeamSecretsNeverReachTheCluster: two real nodes share a project through a real
// rqlited. Alice's node compresses with a fake AI provider that records every request;
// bob's compresses offline (the tool call's own text is what it stores). Each sends a
// prompt and a tool call holding one secret of every kind memnode redacts
// (internal/secretsample), alice a Stop whose transcript holds them too. Once each sees the
// other's records: no row of the cluster (its whole SQL dump) and no file of the rqlited
// node, no file of either data dir, no request the provider received holds any of them.
func TestTeamSecretsNeverReachTheCluster(t *testing.T) {
	t.Parallel()
	key := "sk-ant-test-" + strings.Repeat("t", 24)
	provider := e2ekit.NewRecordingProvider(t, key)
	c, proj, a, b := e2ekit.TeamOfTwo(t, "payments", func(m *e2ekit.TeamMember, user string) {
		if user == "alice" {
			e2ekit.UseFakeAnthropic(t, m.Instance, key, provider.Url)
		}
	})

	var pl e2ekit.Planted
	hook := func(m *e2ekit.TeamMember, event string, payload map[string]any) {
		t.Helper()
		raw, _ := json.Marshal(payload)
		if r := m.RunLean(raw, "hook", "claude-code", event); r.Code != 0 {
			t.Fatalf("hook %s: exit %d: %s", event, r.Code, r.Stderr)
		}
	}
	session := func(m *e2ekit.TeamMember, sid, tag string) {
		t.Helper()
		hook(m, "session-init", map[string]any{"session_id": sid, "cwd": proj, "hook_event_name": "UserPromptSubmit",
			"prompt": pl.Vis(tag+"prompt") + " wire the payment keys:\n" + pl.Secrets(tag[:1]+"p")})
		hook(m, "observation", map[string]any{"session_id": sid, "cwd": proj, "hook_event_name": "PostToolUse", "tool_name": "Bash",
			"tool_input":    map[string]any{"command": "cat .env.production # " + pl.Vis(tag+"call"), "description": "show the keys"},
			"tool_response": map[string]any{"stdout": pl.Secrets(tag[:1] + "t"), "stderr": ""}})
	}
	session(a, "s-alice", "alice")
	tr := filepath.Join(t.TempDir(), "alice.jsonl")
	var lines []string
	for _, e := range []map[string]any{
		{"type": "user", "message": map[string]any{"role": "user", "content": "wire the payment keys"}},
		{"type": "assistant", "message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": "Done, with:\n" + pl.Secrets("as")}}}},
	} {
		l, _ := json.Marshal(e)
		lines = append(lines, string(l))
	}
	if err := os.WriteFile(tr, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hook(a, "summarize", map[string]any{"session_id": "s-alice", "cwd": proj, "hook_event_name": "Stop", "transcript_path": tr})
	session(b, "s-bob", "bob")

	// Each sees the other's prompt and tool call: the ops went through the cluster.
	for _, w := range []struct {
		m    *e2ekit.TeamMember
		word string
	}{{b, "VISIBLE-aliceprompt"}, {a, "VISIBLE-bobprompt"}, {a, "VISIBLE-bobcall"}} {
		testkit.WaitFor(t, w.word+" through the team", 60*time.Second, func() bool { return w.m.Finds(t, w.word) })
	}
	testkit.WaitFor(t, "alice's queue drained and her summary made", 60*time.Second, func() bool {
		return a.Queued() == 0 && strings.Contains(string(provider.Received()), "SESSION SUMMARY")
	})
	for _, m := range []*e2ekit.TeamMember{a, b} {
		testkit.WaitForState(t, "nothing left to push", 30*time.Second, func() (bool, string) {
			var st team.Status
			out := m.MustRun(nil, "team", "status", "--json")
			return json.Unmarshal([]byte(out), &st) == nil && st.PushBacklog == 0, out
		})
	}

	// The whole cluster, every table, as rqlite dumps it.
	req, _ := http.NewRequest(http.MethodGet, c.URLs()[0]+"/db/backup?fmt=sql", nil)
	req.SetBasicAuth(rqlitetest.Admin, c.AdminPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dump, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(dump), "INSERT INTO") {
		t.Fatalf("cluster dump: %d, %d bytes", resp.StatusCode, len(dump))
	}
	for _, v := range []string{"VISIBLE-aliceprompt", "VISIBLE-bobprompt", "VISIBLE-bobcall"} {
		if !strings.Contains(string(dump), v) {
			t.Fatalf("the cluster holds no %s: the check below would prove nothing", v)
		}
	}
	sent := string(provider.Received())
	if !strings.Contains(sent, "VISIBLE-alicecall") {
		t.Fatalf("the provider did not see alice's tool call (%d bytes received)", len(sent))
	}
	for _, s := range pl.Secret {
		if strings.Contains(string(dump), s) {
			t.Errorf("the cluster holds %q", s)
		}
		if strings.Contains(sent, s) {
			t.Errorf("the AI provider received %q", s)
		}
		for _, where := range []struct{ name, dir string }{{"alice's data dir", a.DataDir}, {"bob's data dir", b.DataDir}, {"the rqlited node", c.Nodes[0].Dir}} {
			if files := testkit.FilesContaining(t, where.dir, s); len(files) > 0 {
				t.Errorf("%s: %q in %v", where.name, s, files)
			}
		}
	}
	t.Logf("%d secrets checked in the cluster (%d bytes of SQL), %d provider requests, both data dirs", len(pl.Secret), len(dump), strings.Count(sent, `"model"`))
}

package agentcli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/testkit"
)

// fakeNPM writes an npm stand-in that logs each call to log, then behaves per mode: "ok"
// creates node_modules/.bin/<bin>, "offline" fails as npm does without a network.
func fakeNPM(t *testing.T, mode string) (npm, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "calls")
	npm = filepath.Join(dir, "npm")
	script := `#!/bin/sh
echo "$@" >> "` + log + `"
prefix=""
while [ $# -gt 0 ]; do
  if [ "$1" = "--prefix" ]; then prefix="$2"; fi
  shift
done
case "` + mode + `" in
offline) echo "npm error code EAI_AGAIN" >&2; echo "npm error request to https://registry.npmjs.org failed" >&2; exit 1 ;;
broken) echo "npm error code ETARGET" >&2; exit 1 ;;
esac
mkdir -p "$prefix/node_modules/.bin"
printf '#!/bin/sh\necho hi\n' > "$prefix/node_modules/.bin/tool"
chmod +x "$prefix/node_modules/.bin/tool"
`
	if err := os.WriteFile(npm, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return npm, log
}

func callCount(t *testing.T, log string) int {
	t.Helper()
	b, err := os.ReadFile(log)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

func TestInstallOnceUnderParallelCallers(t *testing.T) {
	npm, log := fakeNPM(t, "ok")
	root := t.TempDir()
	var wg sync.WaitGroup
	paths := make([]string, 4)
	errs := make([]error, 4)
	for i := range paths {
		wg.Go(func() { paths[i], errs[i] = installAt(npm, root, "@scope/tool", "1.2.3", binPath("tool")) })
	}
	wg.Wait()
	want := filepath.Join(root, "@scope", "tool@1.2.3", "node_modules", ".bin", "tool")
	for i := range paths {
		if errs[i] != nil || paths[i] != want {
			t.Fatalf("caller %d: %q, %v; want %q", i, paths[i], errs[i], want)
		}
	}
	if n := callCount(t, log); n != 1 {
		t.Fatalf("npm ran %d times for four callers, want 1", n)
	}
	b, _ := os.ReadFile(log)
	if got := strings.TrimSpace(string(b)); !strings.Contains(got, "install --prefix "+filepath.Dir(filepath.Dir(filepath.Dir(want)))+" --no-audit --no-fund") || !strings.HasSuffix(got, "@scope/tool@1.2.3") {
		t.Fatalf("npm arguments: %q", got)
	}
}

func TestInstallRedoesAnUnfinishedInstall(t *testing.T) {
	npm, log := fakeNPM(t, "ok")
	root := t.TempDir()
	dir := filepath.Join(root, "tool@1.0.0")
	if err := os.MkdirAll(filepath.Join(dir, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "node_modules", ".bin", "tool"), []byte("half"), 0o755); err != nil {
		t.Fatal(err)
	}
	if exe, ok := installedAt(root, "tool", "1.0.0", binPath("tool")); ok {
		t.Fatalf("an install without its marker reads as installed (%s)", exe)
	}
	exe, err := installAt(npm, root, "tool", "1.0.0", binPath("tool"))
	if err != nil {
		t.Fatal(err)
	}
	if n := callCount(t, log); n != 1 {
		t.Fatalf("an install without its marker was reused (npm ran %d times)", n)
	}
	if got, ok := installedAt(root, "tool", "1.0.0", binPath("tool")); !ok || got != exe {
		t.Fatalf("a finished install reads as %q, %v; want %q", got, ok, exe)
	}
	if got, ok := installedAt(root, "tool", "1.0.0", binPath("other")); ok {
		t.Fatalf("a finished install without the asked-for executable reads as installed (%s)", got)
	}
	if _, err := installAt(npm, root, "tool", "1.0.0", binPath("tool")); err != nil {
		t.Fatal(err)
	}
	if n := callCount(t, log); n != 1 {
		t.Fatalf("a finished install was not reused (npm ran %d times)", n)
	}
}

func TestInstallTellsAnUnreachableRegistryFromABadPackage(t *testing.T) {
	npm, _ := fakeNPM(t, "offline")
	_, err := installAt(npm, t.TempDir(), "tool", "1.0.0", binPath("tool"))
	var re *registryError
	if !errors.As(err, &re) {
		t.Fatalf("offline npm: %v, want a registryError", err)
	}
	npm, _ = fakeNPM(t, "broken")
	_, err = installAt(npm, t.TempDir(), "tool", "9.9.9", binPath("tool"))
	if err == nil || errors.As(err, &re) {
		t.Fatalf("missing version: %v, want a plain error", err)
	}
	npm, _ = fakeNPM(t, "ok")
	if _, err := installAt(npm, t.TempDir(), "tool", "1.0.0", binPath("other")); err == nil {
		t.Fatal("a package without the asked-for executable was accepted")
	}
}

// sseEvents reads a Server-Sent Events body into (event, data) pairs.
func sseEvents(t *testing.T, resp *http.Response) [][2]string {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var out [][2]string
	var name string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, [2]string{name, strings.TrimPrefix(line, "data: ")})
			name = ""
		}
	}
	return out
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestAnthropicStreamsToolUseThenText(t *testing.T) {
	s := NewServer(t, &AnthropicMessages{}, Sequence(
		Turn{Calls: []Call{{Name: "Bash", Args: map[string]string{"command": "ls"}}}},
		Turn{Text: "All done."},
	))
	req := `{"model":"claude-x","stream":true,"tools":[{"name":"Bash"},{"name":"mcp__memnode__search"}],"messages":[]}`
	ev := sseEvents(t, post(t, s.URL+"/v1/messages", req))
	var names []string
	for _, e := range ev {
		names = append(names, e[0])
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !slices.Equal(names, want) {
		t.Fatalf("events %v, want %v", names, want)
	}
	var start struct {
		ContentBlock struct{ Type, ID, Name string } `json:"content_block"`
	}
	var md struct {
		Delta struct {
			StopReason string `json:"stop_reason"`
		} `json:"delta"`
	}
	json.Unmarshal([]byte(ev[1][1]), &start)
	json.Unmarshal([]byte(ev[4][1]), &md)
	var pj struct {
		Delta struct {
			PartialJSON string `json:"partial_json"`
		} `json:"delta"`
	}
	json.Unmarshal([]byte(ev[2][1]), &pj)
	if start.ContentBlock.Type != "tool_use" || start.ContentBlock.Name != "Bash" || start.ContentBlock.ID != "call_1" || pj.Delta.PartialJSON != `{"command":"ls"}` || md.Delta.StopReason != "tool_use" {
		t.Fatalf("tool_use stream: %+v %q %q", start, pj.Delta.PartialJSON, md.Delta.StopReason)
	}

	// A side request without tools takes no turn.
	resp := post(t, s.URL+"/v1/messages", `{"model":"claude-haiku","messages":[]}`)
	var side struct {
		Content []struct{ Type, Text string }
	}
	json.NewDecoder(resp.Body).Decode(&side)
	resp.Body.Close()
	if len(side.Content) != 1 || side.Content[0].Text != "OK." {
		t.Fatalf("side request answer: %+v", side)
	}

	ev = sseEvents(t, post(t, s.URL+"/v1/messages", req))
	if !strings.Contains(ev[2][1], `"text":"All done."`) || !strings.Contains(ev[4][1], `"end_turn"`) {
		t.Fatalf("final text stream: %v", ev)
	}
	got := s.ModelRequests()
	if len(got) != 3 || !got[0].HasTool("mcp__memnode__") || got[1].HasTool("") || !got[2].Contains(`"claude-x"`) {
		t.Fatalf("recorded model requests: %+v", got)
	}
}

func TestResponsesStreamsFunctionAndCustomCalls(t *testing.T) {
	s := NewServer(t, &OpenAIResponses{}, Sequence(Turn{Calls: []Call{
		{ID: "call_a", Name: "exec_command", Args: map[string]string{"cmd": "cat app.py"}},
		{Name: "apply_patch", Input: "*** Begin Patch\n*** End Patch\n"},
	}}))
	ev := sseEvents(t, post(t, s.URL+"/v1/responses", `{"model":"gpt-5.5","stream":true,"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__memnode","tools":[{"name":"search"}]}]}`))
	var types []string
	var items []map[string]any
	for _, e := range ev {
		var v struct {
			Type string
			Item map[string]any
		}
		if err := json.Unmarshal([]byte(e[1]), &v); err != nil {
			t.Fatal(err)
		}
		if e[0] != v.Type {
			t.Fatalf("event line %q, data type %q", e[0], v.Type)
		}
		types = append(types, v.Type)
		if v.Type == "response.output_item.done" {
			items = append(items, v.Item)
		}
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.completed" || len(items) != 2 {
		t.Fatalf("events %v", types)
	}
	if items[0]["type"] != "function_call" || items[0]["call_id"] != "call_a" || items[0]["arguments"] != `{"cmd":"cat app.py"}` {
		t.Fatalf("function call item %v", items[0])
	}
	if items[1]["type"] != "custom_tool_call" || items[1]["name"] != "apply_patch" || items[1]["input"] != "*** Begin Patch\n*** End Patch\n" || items[1]["call_id"] != "call_1" {
		t.Fatalf("custom call item %v", items[1])
	}
	if r := s.ModelRequests(); len(r) != 1 || !r[0].HasTool("mcp__memnode__search") {
		t.Fatalf("tools of the request: %+v", r)
	}
}

func TestChatStreamsToolCallsAndAnswersJSON(t *testing.T) {
	s := NewServer(t, &OpenAIChat{}, Sequence(
		Turn{Calls: []Call{{Name: "view", Args: map[string]string{"path": "app.py"}}}},
		Turn{Text: "Fixed."},
	))
	tools := `"tools":[{"type":"function","function":{"name":"view"}}]`
	ev := sseEvents(t, post(t, s.URL+"/v1/chat/completions", `{"model":"gpt-4.1","stream":true,`+tools+`}`))
	if ev[len(ev)-1][1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %v", ev)
	}
	joined := ""
	for _, e := range ev {
		joined += e[1] + "\n"
	}
	if !strings.Contains(joined, `"tool_calls":[{"function":{"arguments":"{\"path\":\"app.py\"}","name":"view"},"id":"call_1","index":0,"type":"function"}]`) || !strings.Contains(joined, `"finish_reason":"tool_calls"`) {
		t.Fatalf("tool call stream:\n%s", joined)
	}
	resp := post(t, s.URL+"/v1/chat/completions", `{"model":"gpt-4.1",`+tools+`}`)
	defer resp.Body.Close()
	var c struct {
		Object  string
		Choices []struct {
			Message      struct{ Content string }
			FinishReason string `json:"finish_reason"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].Message.Content != "Fixed." || c.Choices[0].FinishReason != "stop" {
		t.Fatalf("JSON answer: %+v", c)
	}
}

func TestServerRecordsOtherRequestsAndCloses(t *testing.T) {
	s := NewServer(t, &OpenAIChat{}, Sequence())
	resp, err := http.Get(s.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET /v1/models: %d", resp.StatusCode)
	}
	if r := s.Requests(); len(r) != 1 || r[0].Model || r[0].Path != "/v1/models" {
		t.Fatalf("recorded %+v", r)
	}
	s.Close()
	s.Close()
	if _, err := http.Get(s.URL + "/"); err == nil {
		t.Fatal("server still answers after Close")
	}
}

func TestEnvIsolatesHomeAndCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-real")
	t.Setenv("MEMNODE_DATA_DIR", "/real/data")
	home := NewHome(t)
	env := Env(home, "EXTRA=1")
	for _, kv := range env {
		if strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") || strings.HasPrefix(kv, "MEMNODE_DATA_DIR=") {
			t.Fatalf("env keeps %s", kv)
		}
	}
	for _, want := range []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "EXTRA=1"} {
		if !slices.Contains(env, want) {
			t.Fatalf("env lacks %s", want)
		}
	}
}

func TestGitProjectCommitsItsFiles(t *testing.T) {
	dir := GitProject(t, map[string]string{"app.py": "print(1)\n", "pkg/mod.py": "x = 1\n"})
	cmd := exec.Command("git", "ls-files")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(out)); !slices.Equal(got, []string{"app.py", "pkg/mod.py"}) {
		t.Fatalf("committed files %v", got)
	}
	st := exec.Command("git", "status", "--porcelain")
	st.Dir = dir
	if out, _ := st.Output(); len(out) != 0 {
		t.Fatalf("work tree not clean: %s", out)
	}
}

func TestRunKillsTheProcessGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	// The child outlives its parent unless Run kills the process group.
	cmd := exec.Command("sh", "-c", `sleep 300 & echo $! > `+pidFile+`; echo started; exit 3`)
	o := Run(t, time.Minute, cmd)
	if o.Code != 3 || strings.TrimSpace(o.Stdout) != "started" {
		t.Fatalf("run: %+v", o)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	stat := "/proc/" + strings.TrimSpace(string(b)) + "/stat"
	testkit.WaitForState(t, "the orphaned child to die", 10*time.Second, func() (bool, string) {
		st, err := os.ReadFile(stat)
		if err != nil {
			return true, "" // gone
		}
		f := strings.Fields(string(st))
		return len(f) > 2 && (f[2] == "Z" || f[2] == "X"), string(st)
	})

	hang := exec.Command("sh", "-c", "sleep 300")
	if o := Run(t, 100*time.Millisecond, hang); o.Code != -1 {
		t.Fatalf("a run past its deadline: %+v", o)
	}
}

// binPath is where Install looks for the executable bin inside an install dir.
func binPath(bin string) string { return filepath.Join("node_modules", ".bin", bin) }

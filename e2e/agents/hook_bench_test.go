package agents

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/e2ekit"

	"github.com/memnode/memnode/install"
	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/platform/codex"
	"github.com/memnode/memnode/platform/geminicli"
	"github.com/memnode/memnode/platform/qwencode"
)

// BenchmarkCodexBashHooks is what one Codex shell call costs in memnode's hooks: every hook
// that codex.HookSpecs registers for PostToolUse and matches Bash runs as its own lean
// memnode-hook process, all at once (Codex starts matching hooks concurrently), against a
// real node. ns/op is the wall time until the last one exits; hooks/op the processes
// started; cpu-ms/op their user+system CPU. "reads-file" is `cat app.py` (file context is
// looked up), "no-file" a command that names none.
func BenchmarkCodexBashHooks(b *testing.B) {
	in := e2ekit.NewInstance(b)
	in.Start()
	project := agentcli.GitProject(b, greetingProject())
	subs := matchingHooks(codex.HookSpecs(), "PostToolUse", "Bash")
	for _, bc := range []struct{ name, cmd string }{
		{"reads-file", "cat app.py"},
		{"no-file", "python3 test_app.py"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchHooks(b, in, project, codex.Name, subs, map[string]any{
				"session_id": "bench", "cwd": project, "hook_event_name": "PostToolUse", "tool_name": "Bash",
				"tool_input": map[string]string{"command": bc.cmd}, "tool_response": "ok", "tool_use_id": "call_bench",
			})
		})
	}
}

// BenchmarkReadFileHooks is the same for one read_file call of Gemini CLI (AfterTool) and
// Qwen Code (PostToolUse): every hook their HookSpecs register for that event and match
// read_file, run at once as lean memnode-hook processes against a real node (file context
// is looked up for app.py).
func BenchmarkReadFileHooks(b *testing.B) {
	in := e2ekit.NewInstance(b)
	in.Start()
	project := agentcli.GitProject(b, greetingProject())
	app := filepath.Join(project, "app.py")
	for _, bc := range []struct {
		platform, event string
		specs           []install.HookSpec
	}{
		{geminicli.Name, "AfterTool", geminicli.HookSpecs()},
		{qwencode.Name, "PostToolUse", qwencode.HookSpecs()},
	} {
		b.Run(bc.platform, func(b *testing.B) {
			benchHooks(b, in, project, bc.platform, matchingHooks(bc.specs, bc.event, "read_file"), map[string]any{
				"session_id": "bench", "cwd": project, "hook_event_name": bc.event, "tool_name": "read_file",
				"tool_input": map[string]string{"file_path": app}, "tool_use_id": "call_bench",
				"tool_response": map[string]string{"llmContent": "def greet(name): ...", "returnDisplay": ""},
			})
		})
	}
}

// matchingHooks are the memnode events of specs' hooks for event whose matcher matches tool
// ("*", "" and a regular expression, as the agents read it).
func matchingHooks(specs []install.HookSpec, event, tool string) []string {
	var subs []string
	for _, s := range specs {
		if s.Event != event {
			continue
		}
		if m := s.Matcher; m == "" || m == "*" || regexp.MustCompile(m).MatchString(tool) {
			subs = append(subs, s.Sub)
		}
	}
	return subs
}

// benchHooks runs, per iteration, `memnode-hook hook <platform> <sub>` for every sub at once
// with payload on stdin, and reports hooks/op and the processes' cpu-ms/op.
func benchHooks(b *testing.B, in *e2ekit.Instance, project, platform string, subs []string, payload map[string]any) {
	stdin, err := json.Marshal(payload)
	if err != nil {
		b.Fatal(err)
	}
	lean := filepath.Join(filepath.Dir(e2ekit.MemnodeBin), "memnode-hook")
	cpu0 := testkit.ChildrenCPU(b)
	b.ResetTimer()
	for range b.N {
		var wg sync.WaitGroup
		errs := make([]error, len(subs))
		for i, sub := range subs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(lean, "hook", platform, sub)
				cmd.Env, cmd.Dir = in.Env(), project
				cmd.Stdin = bytes.NewReader(stdin)
				errs[i] = cmd.Run()
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				b.Fatalf("hook: %v", err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(subs)), "hooks/op")
	b.ReportMetric(float64(testkit.ChildrenCPU(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

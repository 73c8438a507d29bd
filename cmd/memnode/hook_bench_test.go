package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/memnode/memnode/internal/agentcli"
	"github.com/memnode/memnode/internal/testkit"
	"github.com/memnode/memnode/platform/codex"
)

// BenchmarkCodexBashHooks is what one Codex shell call costs in memnode's hooks: every hook
// that codex.HookSpecs registers for PostToolUse and matches Bash runs as its own lean
// memnode-hook process, all at once (Codex starts matching hooks concurrently), against a
// real node. ns/op is the wall time until the last one exits; hooks/op the processes
// started; cpu-ms/op their user+system CPU. "reads-file" is `cat app.py` (file context is
// looked up), "no-file" a command that names none.
func BenchmarkCodexBashHooks(b *testing.B) {
	var subs []string
	for _, s := range codex.HookSpecs() {
		if s.Event == "PostToolUse" && (s.Matcher == "Bash" || s.Matcher == "*") {
			subs = append(subs, s.Sub)
		}
	}
	in := newInstance(b)
	in.start()
	project := agentcli.GitProject(b, greetingProject())
	lean := filepath.Join(filepath.Dir(memnodeBin), "memnode-hook")
	for _, bc := range []struct{ name, cmd string }{
		{"reads-file", "cat app.py"},
		{"no-file", "python3 test_app.py"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			payload, err := json.Marshal(map[string]any{
				"session_id": "bench", "cwd": project, "hook_event_name": "PostToolUse", "tool_name": "Bash",
				"tool_input": map[string]string{"command": bc.cmd}, "tool_response": "ok", "tool_use_id": "call_bench",
			})
			if err != nil {
				b.Fatal(err)
			}
			cpu0 := testkit.ChildrenCPU(b)
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				errs := make([]error, len(subs))
				for i, sub := range subs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						cmd := exec.Command(lean, "hook", codex.Name, sub)
						cmd.Env, cmd.Dir = in.env(), project
						cmd.Stdin = bytes.NewReader(payload)
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
		})
	}
}

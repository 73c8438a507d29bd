//go:build !memnode_lean

package main

import (
	"testing"
	"time"

	"github.com/memnode/memnode/configs"
)

// TestBatchWindow: the workers hold back for ai_cli_batch_wait (default 20 s, a backlog at
// most six times that) only when an agent CLI is in the chain.
func TestBatchWindow(t *testing.T) {
	for _, tc := range []struct {
		providers []string
		wait      time.Duration
		linger    time.Duration
	}{
		{nil, 0, 0},
		{[]string{"anthropic", "openai"}, 3 * time.Second, 0},
		{[]string{"anthropic", "claude-code"}, 0, configs.DefaultAICLIBatchWait},
		{[]string{"gemini-cli"}, 3 * time.Second, 3 * time.Second},
	} {
		linger, maxDefer := batchWindow(configs.Settings{AIProviders: tc.providers, AICLIBatchWait: configs.Duration(tc.wait)})
		if linger != tc.linger || maxDefer != 6*tc.linger {
			t.Errorf("%v with wait %s: linger %s, max defer %s; want %s, %s", tc.providers, tc.wait, linger, maxDefer, tc.linger, 6*tc.linger)
		}
	}
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/memnode/memnode/platform"
	"github.com/memnode/memnode/platform/registry"
)

// PlatformHook is one agent's observation-hook timing.
type PlatformHook struct {
	Platform string `json:"platform"`
	// Payload names the fixture call timed ("afterShellExecution Bash").
	Payload string `json:"payload"`
	Stats   Stats  `json:"stats"`
}

// fixturePath is the directory all fixtures' payloads name; rewritten into the project.
const fixturePath = "/home/dev/demo-app"

// observationPayload is the first call of a platform's recorded session that its adapter
// turns into a recorded tool call, with the fixture's project path rewritten to dir.
func observationPayload(p platform.Platform, root, dir string) ([]byte, string, error) {
	f, err := os.Open(filepath.Join(root, p.Fixtures, "session.jsonl"))
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var c struct {
			Event   string          `json:"event"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &c) != nil {
			continue
		}
		in, err := p.Adapter.Normalize(platform.EventObservation, c.Payload)
		if err != nil || in.ToolName == "" || in.Bookkeeping {
			continue
		}
		return []byte(strings.ReplaceAll(string(c.Payload), fixturePath, dir)), c.Event + " " + in.ToolName, nil
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	return nil, "", fmt.Errorf("%s: no tool call in its fixtures", p.Name)
}

// repoRoot is the directory with go.mod above the working directory (make bench runs from
// it; the package's tests from cmd/memnode-bench).
func repoRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		d = parent
	}
}

// timePlatformHooks times the observation hook of every registered agent with hooks, so a
// new adapter cannot make hooks slow unnoticed. Agents without fixtures are skipped (said
// on stderr).
func (h *harness) timePlatformHooks(ctx context.Context) ([]PlatformHook, error) {
	root, err := repoRoot()
	if err != nil {
		h.logf("per-platform hooks skipped: %v", err)
		return nil, nil
	}
	var out []PlatformHook
	for _, p := range registry.Builtin().All() {
		if p.Adapter == nil || p.Fixtures == "" {
			continue // MCP-only
		}
		payload, what, err := observationPayload(p, root, h.hookPrj)
		if err != nil {
			h.logf("hook observation %s skipped: %v", p.Name, err)
			continue
		}
		h.logf("hook observation %s (%s): %d warm-up + %d timed runs", p.Name, what, h.cfg.Warmup, h.cfg.HookRuns)
		st, err := h.timeHook(ctx, p.Name, "observation", h.hookPrj, func(int) []byte { return payload }, false)
		if err != nil {
			return nil, err
		}
		out = append(out, PlatformHook{Platform: p.Name, Payload: what, Stats: st})
	}
	return out, nil
}

//go:build !memnode_lean

package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memnode/memnode/ai"
	"github.com/memnode/memnode/ai/llm"
	"github.com/memnode/memnode/ai/offline"
	"github.com/memnode/memnode/configs"
	"github.com/memnode/memnode/keys"
	"github.com/memnode/memnode/memory"
)

// buildCompressor turns the AI settings into the compressor the node uses: the offline
// compressor alone, or a chain of providers that always ends in it. A provider without a
// key is left out with a warning (the node still runs).
func buildCompressor(env *cliEnv, log *slog.Logger) (ai.Compressor, error) {
	s := env.Settings
	offline := offline.New()
	if len(s.AIProviders) == 0 {
		return offline, nil
	}
	// The key store is opened only if a key is not in the environment: probing the OS
	// keyring can take seconds on a headless machine.
	var store *keys.Store
	storeTried := false
	keyFor := func(kind string) (string, string, error) {
		if !storeTried && env.Getenv(keys.EnvVar(kind)) == "" {
			storeTried = true
			st, err := openKeyStore(env)
			if err != nil {
				log.Warn("no key store available; only keys from the environment can be used", "err", err)
			} else {
				store = st
			}
		}
		return aiKey(env, store, kind)
	}
	var budget *llm.Budget
	if s.AIDailyTokenBudget > 0 {
		budget = llm.NewBudget(s.AIDailyTokenBudget, llm.NewFileBudgetStore(filepath.Join(env.DataDir, "ai-budget.json")), nil)
	}
	var comps []*llm.Compressor
	for _, kind := range s.AIProviders {
		if llm.IsCLIKind(kind) {
			c, err := cliCompressor(env, kind, budget, log)
			if err != nil {
				return nil, err
			}
			comps = append(comps, c)
			continue
		}
		key, source, err := keyFor(kind)
		if err != nil {
			return nil, fmt.Errorf("read %s key: %w", kind, err)
		}
		if key == "" {
			log.Warn("no key for provider; it is skipped (memnode keys set "+kind+")", "provider", kind)
			continue
		}
		p, err := llm.NewProvider(kind, llm.ProviderConfig{Model: s.AIModels[kind], BaseURL: s.AIBaseURLs[kind], APIKey: key, MaxOutputTokens: s.AIMaxOutputTokens})
		if err != nil {
			return nil, err
		}
		c, err := llm.NewCompressor(llm.CompressorConfig{Provider: p, Budget: budget, MaxOutputTokens: s.AIMaxOutputTokens, Logger: log})
		if err != nil {
			return nil, err
		}
		log.Info("ai provider enabled", "provider", kind, "model", p.Model(), "key_source", source)
		comps = append(comps, c)
	}
	return llm.NewChain(llm.ChainConfig{Compressors: comps, Fallback: offline, Budget: budget, Logger: log})
}

// cliCompressor is the compressor of an agent CLI provider: no key (the CLI's own login),
// run in the data dir's memnode-compressor directory (a project memnode never records),
// with the node's environment (the CLI's login and proxy settings) plus the guards
// llm.CLI adds. It is kept in the chain even when the CLI is not installed: status and
// doctor say so, and it is found once installed.
func cliCompressor(env *cliEnv, kind string, budget *llm.Budget, log *slog.Logger) (*llm.Compressor, error) {
	s := env.Settings
	p, err := llm.NewCLI(llm.CLIConfig{Kind: kind, Path: s.AICLIPaths[kind], Model: s.AIModels[kind],
		WorkDir: filepath.Join(env.DataDir, memory.CompressorProject), Env: os.Environ()})
	if err != nil {
		return nil, err
	}
	c, err := llm.NewCompressor(llm.CompressorConfig{Provider: p, Budget: budget, MaxOutputTokens: s.AIMaxOutputTokens,
		Estimate: p.Estimate, MaxAttempts: 2, Logger: log})
	if err != nil {
		p.Close()
		return nil, err
	}
	exe := p.Executable()
	if strings.HasPrefix(exe, "not found") {
		log.Warn("agent CLI provider not found; memory is compressed by the next provider until it is installed", "provider", kind, "cli", exe)
	} else {
		log.Info("ai provider enabled", "provider", kind, "model", p.Model(), "cli", exe)
	}
	return c, nil
}

// batchWindow is the workers' hold-back while hook events keep coming (0, 0: the pipeline's
// defaults, 50 ms and 5 s). With an agent CLI in the chain the queue must be quiet for
// ai_cli_batch_wait, and a backlog waits at most six times that: one CLI run then covers a
// turn's tool calls instead of one each.
func batchWindow(s configs.Settings) (linger, maxDefer time.Duration) {
	if !slices.ContainsFunc(s.AIProviders, llm.IsCLIKind) {
		return 0, 0
	}
	linger = time.Duration(s.AICLIBatchWait)
	if linger <= 0 {
		linger = configs.DefaultAICLIBatchWait
	}
	return linger, 6 * linger
}

// Package agents holds the real-process tests of memnode under real agent CLIs (Claude Code,
// Codex, Copilot, Gemini CLI, Qwen Code, OpenCode, Antigravity; pinned npm packages through
// internal/agentcli) against scripted fake model servers, the compressor chain of agent CLIs,
// the npm package and the hook cost benchmarks. Test files only; helpers in internal/e2ekit.
// Each test owns its data dirs, HOME, project, ports and fake model server, so it runs in
// parallel with the others (t.Parallel), but its agent CLIs and npm runs take turns: one per
// core but one runs at once (cliSlots; one on 2 cores), and a run's timeout starts when it
// has its slot.
// TestClaudeCodeCompressor runs first, alone: what it asserts depends on how fast Claude
// Code makes its calls, and the node starts claude -p itself, outside the slots.
package agents

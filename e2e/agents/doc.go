// Package agents holds the real-process tests of memnode under real agent CLIs (Claude Code,
// Codex, Copilot, Gemini CLI, Qwen Code, OpenCode, Antigravity; pinned npm packages through
// internal/agentcli) against scripted fake model servers, the compressor chain of agent CLIs,
// the npm package and the hook cost benchmarks. Test files only; helpers in internal/e2ekit.
package agents

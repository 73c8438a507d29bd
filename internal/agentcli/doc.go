// Package agentcli runs real coding-agent CLIs from npm in tests: it installs a pinned npm
// package once into a cache dir, serves a scripted fake model on 127.0.0.1 in the agent's
// wire format, and makes the isolated HOME and temp git project an agent session runs in.
//
// # Installing a CLI
//
// Install(tb, "@openai/codex", "0.171.0", "codex") runs
// `npm install --prefix DIR --no-audit --no-fund @openai/codex@0.171.0` into
// DIR = $MEMNODE_AGENT_CACHE/<pkg>@<ver> (default: the user cache dir, honouring
// $XDG_CACHE_HOME, + memnode-test/npm), under a file lock so parallel test processes install
// once, and returns DIR/node_modules/.bin/codex. A finished install is marked and reused;
// Installed finds it without npm or the lock (a caller that rations npm runs asks it first).
// When npm is missing or the registry is unreachable the test is skipped with a message
// saying so — or fails when MEMNODE_CI=1 (.ci/run sets it): CI must never skip silently.
// Need applies the same rule to any other missing tool.
//
// # The fake model
//
// NewServer(tb, wire, script) starts a real HTTP server on a free 127.0.0.1 port. Every
// request is recorded (Requests). Requests the Wire serves (its model endpoint) are answered
// with the Script's next Turn: tool calls, or a final text. A Wire is one provider's wire
// format; each lives in its own file:
//
//   - AnthropicMessages: POST /v1/messages, streaming SSE or JSON (Claude Code)
//   - OpenAIResponses: POST /v1/responses, SSE (Codex CLI)
//   - OpenAIChat: POST /v1/chat/completions, streaming SSE or JSON (Copilot CLI, and any
//     OpenAI-compatible provider)
//
// A new format is a new file with a type implementing Wire; nothing else changes.
//
// Sequence(turns...) is the usual Script: each request that offers the model tools takes the
// next turn; requests without tools (titles, summaries an agent asks for on the side) get a
// short text and take none; after the last turn every request gets "Done.".
//
// # The session's surroundings
//
// NewHome makes an empty home directory; Env builds a child environment whose HOME, XDG
// dirs and provider credentials are the test's own, so the user's real agent config, keys
// and memnode data dir are never read or written. GitProject makes a committed git
// repository from a map of files. Run runs a CLI with a deadline, stdin closed, and kills
// its whole process group afterwards (agents start MCP servers and hooks as children).
package agentcli

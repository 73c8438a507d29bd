// Package cli holds the real-process tests of the memnode binary that need no peer, team
// cluster, browser or agent CLI: commands and their arguments, start/stop, durability under
// kill -9, corruption and repair, privacy, limits, import, MCP, search, release archives.
// Test files only; helpers in internal/e2ekit. Each test owns its data dir (also its HOME),
// ports (e2ekit.FreePort) and processes, so it runs in parallel with the others (t.Parallel),
// but for those that assert how long a command took: they run first, alone.
package cli

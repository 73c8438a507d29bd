package install

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// binaryPath matches an absolute path to a memnode executable in a config file's text: a hook
// command (`/p/memnode-hook hook claude-code context`, shell-quoted when it holds blanks), an
// MCP server's "command", OpenCode's plugin constant, Codex's TOML.
var binaryPath = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`'(/[^']*/memnode(?:-hook)?(?:\.exe)?)'|(/[^\s"'\\,;=]*/memnode(?:-hook)?(?:\.exe)?)(?:["'\s\\,;]|$)`)
})

// Binaries returns, once each in order of appearance, the absolute paths of memnode and
// memnode-hook executables that text (an agent's config file) runs. Bare names (project
// scope writes them, found in PATH) are not paths and are not returned.
func Binaries(text []byte) []string {
	var out []string
	for _, m := range binaryPath().FindAllSubmatch(text, -1) {
		p := string(m[1])
		if p == "" {
			p = string(m[2])
		}
		p = strings.ReplaceAll(p, `'\''`, `'`)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// mcpServer matches memnode started as an MCP server: its path, then, across a few characters
// of JSON, TOML or YAML punctuation, the argument mcp — `"command": "/p/memnode", "args":
// ["mcp"]`, Codex's `args = ["mcp"]`, OpenCode's `["/p/memnode", "mcp"]`, goose's
// `args:\n - mcp`, or one command string `/p/memnode mcp`.
var mcpServer = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`/memnode(?:\.exe)?['"]?[\s,\]]*(?:["']?args["']?\s*[:=]\s*\[?\s*-?\s*)?["']?mcp(?:["'\s\],]|$)`)
})

// hookRun matches memnode's hooks: the hook binary's path (it runs nothing else; OpenCode's
// plugin names it in a constant) or `<memnode> hook <platform> …`.
var hookRun = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`/memnode-hook(?:\.exe)?(?:['"\s]|$)|/memnode(?:\.exe)?'?\s+hook\s`)
})

// RunsMCPServer reports whether text (an agent's config file) starts memnode's MCP server.
func RunsMCPServer(text []byte) bool { return mcpServer().Match(text) }

// RunsHooks reports whether text (an agent's config file) runs memnode's hooks.
func RunsHooks(text []byte) bool { return hookRun().Match(text) }

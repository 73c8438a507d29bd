package install

import (
	"regexp"
	"slices"
	"strings"
)

// binaryPath matches an absolute path to a memnode executable in a config file's text: a hook
// command (`/p/memnode-hook hook claude-code context`, shell-quoted when it holds blanks), an
// MCP server's "command", OpenCode's plugin constant, Codex's TOML.
var binaryPath = regexp.MustCompile(`'(/[^']*/memnode(?:-hook)?(?:\.exe)?)'|(/[^\s"'\\,;=]*/memnode(?:-hook)?(?:\.exe)?)(?:["'\s\\,;]|$)`)

// Binaries returns, once each in order of appearance, the absolute paths of memnode and
// memnode-hook executables that text (an agent's config file) runs. Bare names (project
// scope writes them, found in PATH) are not paths and are not returned.
func Binaries(text []byte) []string {
	var out []string
	for _, m := range binaryPath.FindAllSubmatch(text, -1) {
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

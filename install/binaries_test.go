package install

import (
	"slices"
	"testing"
)

func TestBinaries(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []string
	}{
		{"claude hooks and mcp", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"/opt/mn/memnode-hook hook claude-code summarize"}]}]},
			"mcpServers":{"memnode":{"type":"stdio","command":"/opt/mn/memnode","args":["mcp"]}}}`, []string{"/opt/mn/memnode-hook", "/opt/mn/memnode"}},
		{"quoted path with a blank", `{"command":"'/home/a b/bin/memnode-hook' hook claude-code context"}`, []string{"/home/a b/bin/memnode-hook"}},
		{"codex toml", "[mcp_servers.memnode]\ncommand = \"/usr/local/bin/memnode\"\nargs = [\"mcp\"]\n", []string{"/usr/local/bin/memnode"}},
		{"opencode plugin", "const MEMNODE_HOOK = \"/x/y/memnode-hook\";\n", []string{"/x/y/memnode-hook"}},
		{"bare names are not paths", `{"command":"memnode-hook hook claude-code context"}`, nil},
		{"other programs", `{"command":"/usr/bin/memnoded hook","x":"/a/memnode-hookx"}`, nil},
		{"once each", `"/a/memnode" "/a/memnode"`, []string{"/a/memnode"}},
	} {
		if got := Binaries([]byte(c.text)); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

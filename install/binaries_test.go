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

func TestRunsMCPServerAndHooks(t *testing.T) {
	for _, c := range []struct {
		name, text string
		mcp, hooks bool
	}{
		{"claude mcp", `{"mcpServers":{"memnode":{"type":"stdio","command":"/opt/mn/memnode","args":["mcp"]}}}`, true, false},
		{"claude mcp, indented", "{\n  \"mcpServers\": {\n    \"memnode\": {\n      \"command\": \"/opt/mn/memnode\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}", true, false},
		{"codex toml", "[mcp_servers.memnode]\ncommand = \"/usr/local/bin/memnode\"\nargs = [\"mcp\"]\n", true, false},
		{"opencode command array", "{\"mcp\": {\"memnode\": {\"type\": \"local\", \"command\": [\n  \"/x/memnode\",\n  \"mcp\"\n]}}}", true, false},
		{"goose yaml", "extensions:\n  memnode:\n    cmd: \"/x/memnode\"\n    args:\n    - mcp\n", true, false},
		{"one command string", `{"command":"/x/memnode mcp"}`, true, false},
		{"hooks through memnode-hook", `{"command":"/opt/mn/memnode-hook hook claude-code context"}`, false, true},
		{"hooks through memnode, quoted", `{"command":"'/home/a b/memnode' hook codex summarize"}`, false, true},
		{"windsurf: an mcp event name is not the server", "{\"post_mcp_tool_use\": [{\"command\": \"/x/memnode-hook hook windsurf observation\"}]}", false, true},
		{"opencode plugin constant", "const HOOK = \"/x/y/memnode-hook\"\n", false, true},
		{"another program's mcp", `{"command":"/x/othermemnode","args":["mcp"],"y":"/x/memnoded mcp"}`, false, false},
		{"memnode with another argument", `{"command":"/x/memnode","args":["mcpx"]}`, false, false},
	} {
		if got := RunsMCPServer([]byte(c.text)); got != c.mcp {
			t.Errorf("%s: RunsMCPServer = %v, want %v", c.name, got, c.mcp)
		}
		if got := RunsHooks([]byte(c.text)); got != c.hooks {
			t.Errorf("%s: RunsHooks = %v, want %v", c.name, got, c.hooks)
		}
	}
}

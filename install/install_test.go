package install

import (
	"errors"
	"testing"
)

const bin = "/opt/memnode/bin/memnode"

func TestOurSubcommand(t *testing.T) {
	cases := []struct {
		cmd, sub string
		ok       bool
	}{
		{bin + " hook claude-code observation", "observation", true},
		{"/usr/bin/memnode hook claude-code context", "context", true},
		{"'/a b/memnode' hook claude-code summarize", "summarize", true},
		{"/usr/bin/memnode-hook hook claude-code context", "context", true},
		{"/usr/bin/other hook claude-code context", "", false},
		{bin + " hook cursor context", "", false},
		{"node bun-runner.js worker-service.cjs hook claude-code observation", "", false},
		{"memnode", "", false},
	}
	for _, c := range cases {
		sub, ok := ourSubcommand(c.cmd, "claude-code", bin)
		if sub != c.sub || ok != c.ok {
			t.Errorf("ourSubcommand(%q) = %q, %v; want %q, %v", c.cmd, sub, ok, c.sub, c.ok)
		}
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Scope: "global", HomeDir: "/h", Binary: bin},
		{Scope: ScopeUser, HomeDir: "rel", Binary: bin},
		{Scope: ScopeProject, ProjectDir: "/p", Binary: "bin/memnode"},
		{Scope: ScopeUser, HomeDir: "/h", Binary: "memnode"},
		{Scope: ScopeUser, HomeDir: "/h", Binary: bin, HookBinary: "memnode-hook"},
	} {
		if _, err := Install(Target{Platform: "x", Settings: "/nonexistent/s.json", MCP: "/nonexistent/m.json"}, o); !errors.Is(err, ErrBadOption) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
}
